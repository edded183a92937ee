"""The two-stage pipeline (paper Section 1.2 and Appendix F; docs/math_notes.md): privatize
a table of counts.

1. the counts ``d`` (top-coded at the public bound ``upper``) give the histogram
   ``eta`` and the distribution of counts ``zeta = eta / N``;
2. a distribution privatizer spends ``eps_1`` on ``zeta`` -> public target ``z``;
3. a constructor spends ``eps_2`` -> count mechanism ``T`` (fixed point ``z``
   for the fixed-point constructors);
4. every row's count ``d_i`` is replaced by a draw from row ``d_i`` of ``T``.

By sequential composition the release is ``eps_t = eps_1 + eps_2``-DP (plus
the ``delta`` of stage 1 for the cyclic Gaussian). The one-stage baselines skip
steps 2 and spend all of ``eps_t`` on the counts; the discrete Gaussian among them
is (eps_t, delta)-DP. The constructors are reached by their names in
:data:`dpfix.constructors.CONSTRUCTORS`. Privacy is never weakened silently:

- the split is reported (:attr:`PrivatizedCounts.split_rule`, ``split_fraction``);
- the float constructors meet their own ``eps`` only within
  :data:`dpfix.theory.mechanism.FLOAT_RTOL`, so ``T`` is built at
  ``eps_2 (1 - EPS_MARGIN)`` and its realized level ``privacy_level()`` is
  then required to be at most ``eps_2`` itself, with no tolerance, before any
  row is touched (else :class:`NotPrivateError`); the level is that of ``T``
  with its rows normalised in log space;
- what is drawn is itself exactly private (:mod:`dpfix.sampling`,
  docs/sampling.md): the northwest corner, Algorithm 2 and the truncated
  geometric mechanism are drawn as ``G R`` (exact two-sided geometric noise
  with a rational ``lam = p/q <= e^eps_2``, clamped, then a remap that depends
  only on the public ``z``: post-processing), in ``O(n)`` memory without
  building ``T`` beyond ``n = STRUCTURED_T_MAX``; every other pure-DP
  mechanism from integer weights checked exactly ``log(lam)``-DP before any
  draw; the randomness is the secure source (AES-128 in counter mode keyed by
  the operating system's CSPRNG), or a seeded generator when ``seed`` is given
  (not for release). Only the discrete
  Gaussian (an (eps, delta) mechanism) is still drawn by numpy's multinomial on
  float rows of ``T``, as is a histogram input above ``EXACT_HISTOGRAM_MAX_N`` rows;
- the progress callback is told of fixed shares of the rows, never of group
  sizes (these make up the histogram).

The float path (:func:`apply_mechanism`) groups rows by input count: one
multinomial draw per count value, its outcomes shuffled onto the group's rows;
``O(N + n^2)`` in all (the grouping sort is numpy's radix sort, linear for
counts of 16 bits).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dpfix.numbers.deprecation import renamed_keywords
from dpfix.release.frameworks import privatize
from dpfix.release.options import method_options
from dpfix.release.result import PrivatizedCounts

__all__ = ["privatize_counts"]


@renamed_keywords(epsilon="eps")
def privatize_counts(
    counts: Any,
    eps: float,
    *,
    upper: int | str,
    histogram: Any = None,
    constructor: str = "northwest",
    selector: str = "best",
    split: Any = None,
    privatizer: str = "cyclic-laplace",
    seed: int | None = None,
    delta: float | None = None,
    postprocess: str | None = None,
    solver: str | None = None,
    time_limit: float | None = None,
    progress: Callable[[int], Any] | None = None,
    on_stage: Callable[[str], Any] | None = None,
    draw: bool = True,
    framework: str = "two-stage",
    estimator: str | None = None,
    remap: str | None = None,
    upper_share: float | None = None,
) -> PrivatizedCounts:
    """Privatize a table of counts with the two-stage framework (paper Section 1.2).

    The table is given either row by row (``counts``) or as its histogram
    (``counts=None, histogram=eta``, ``eta[i]`` rows with count ``i``): then the
    ``N = sum eta`` rows are never materialised, the result has ``counts=None``
    and ``joint``, the ``n x n`` histogram of (input, output) pairs, whose column
    sums are the private output histogram (one multinomial draw per input
    count, :func:`apply_histogram`). Everything else is the same for both.

    Parameters
    ----------
    counts : array_like of int or None
        The non-negative integer counts, one per row (category); None when
        ``histogram`` is given.
    eps : float
        The total budget ``eps_t``.
    upper : int or "auto"
        The public upper bound; counts above it are top-coded to it
        (``n = upper + 1`` count values). ``"auto"``: chosen privately with the
        share ``upper_share`` of ``eps`` (:func:`dpfix.release.bounds.choose_upper`,
        the loss rule: the bound of least top-coding loss, in count units;
        docs/bounds.md), the release then runs with the rest: ``eps_upper + eps_1 +
        eps_2 = eps`` by sequential composition, and the report states the bound,
        its budget and its rule (``upper_bound``).
    histogram : array_like of int, optional
        The table as a histogram instead of ``counts`` (at most
        ``MAX_HISTOGRAM_N`` rows; entries above ``upper`` are top-coded).
    constructor : str
        A name in :data:`dpfix.constructors.CONSTRUCTORS`: ``"northwest"``
        (default: the northwest-corner split, fixed point ``z``, optimal over F
        for every convex loss, docs/optimum_of_F.md Theorem A; drawn as ``G R``
        in ``O(n)`` memory, so any ``upper``), ``"heuristic"`` (Algorithm 1, the
        paper's), ``"lp"`` (count-error optimum over F, HiGHS;
        ``upper <= LP_MAX_UPPER``), ``"unfixed"`` (Algorithm 2), or the one-stage baselines
        ``"truncated-geometric"``, ``"staircase"`` and ``"discrete-gaussian"``
        (all of ``eps`` on the counts, no target; a split, privatizer or
        postprocess is refused rather than ignored).
    selector : str
        The heuristic's column selector (``"best"`` by default); any other
        value with another constructor is refused (it would be ignored).
    split : float or str, optional
        The fraction of ``eps`` for stage 1, or ``"rule-of-thumb"`` (paper
        Appendix F, :func:`rule_of_thumb_split`). None: the framework's default
        (the rule of thumb for the two-stage and hybrid frameworks: for the
        hybrid it was the best split of the frontier study, docs/no_split.md;
        none for the one-stage framework and constructors).
    privatizer : str
        The distribution privatizer of stage 1, a name in
        :data:`dpfix.release.privatizers.PRIVATIZERS`.
    seed : int, optional
        Makes the run reproducible (numpy's seeded samplers in stage 1, a
        seeded PCG64 feeding the exact samplers of stage 2: tests and
        experiments, not for release); ``None`` (production) uses OpenDP's
        secure samplers for stage 1 and the secure source (AES-128 in counter
        mode keyed by the operating system's CSPRNG) for the exact samplers of
        stage 2 (:mod:`dpfix.sampling`).
    delta : float, optional
        With ``privatizer="cyclic-gaussian"``: the delta of stage 1 (an
        (eps_1, delta) guarantee). With ``constructor="discrete-gaussian"``
        (required there): the delta of the release, (eps_t, delta)-DP; the
        paper uses ``1 / (N + 1)``. Refused otherwise.
    postprocess : str, optional
        Stage 1's post-processing (None: the privatizers' default).
    solver : str, optional
        ``constructor="lp"`` only: ``"highs-ds"`` (dual simplex, default) or
        ``"highs-ipm"`` (interior point).
    time_limit : float, optional
        ``constructor="lp"`` only: seconds for HiGHS; reaching it raises
        :class:`TimeLimitReached` (no row is drawn).
    progress : callable, optional
        Called with numbers of rows done (fixed shares of ``N``).
    on_stage : callable, optional
        Called with ``"stage 1"``, ``"construct"``, ``"draw"``.
    draw : bool
        False: stop before stage 2 draws (a histogram input only; ``joint`` is
        None): the caller draws the rows with ``result.stage2``. In the
        one-stage and hybrid frameworks ``stage2`` is ``G``: the caller draws
        ``y``, then :func:`complete_no_split` with its histogram gives the
        target and the remap (the Dask engine).
    framework : str
        ``"two-stage"`` (default: the paper's framework, above), ``"one-stage"``,
        ``"hybrid"`` or ``"auto"`` (docs/no_split.md; ``"auto"``: the setting
        :data:`AUTO_RULE` chooses by ``eps``, reported in
        ``chosen_by``). One-stage and hybrid: every row is released as
        ``y = G(x)``, the truncated geometric mechanism at the whole budget
        (one-stage) or at ``eps_2`` after a cyclic Laplace release of the
        histogram at ``eps_1`` (hybrid); the target ``z`` is estimated from the
        histogram of ``y`` (and stage 1's release), and every ``y`` is remapped
        onto it. Everything after the releases is post-processing. Only the
        northwest constructor.
    estimator : str, optional
        One-stage and hybrid: how ``z`` is estimated from the histogram of
        ``y``, a name in :data:`dpfix.release.privatizers.deconvolve.ESTIMATORS`
        (default ``"em"``, maximum likelihood).
    remap : str, optional
        One-stage and hybrid: ``"northwest"`` (default: row ``y`` drawn from
        the northwest remap ``R(z)``, so every row follows ``T = G R(z)``, a
        fixed-point mechanism for ``z``) or ``"quantile"`` (all ``y`` matched
        monotonically onto ``z``: the output histogram is ``z`` apportioned to
        ``N`` rows).
    upper_share : float, optional
        With ``upper="auto"``: the share of ``eps`` spent on the bound, in ``(0, 1)``
        (default :func:`dpfix.release.bounds.default_share`: ``eps_upper = min(0.04
        eps, 0.02)``).

    Returns
    -------
    PrivatizedCounts
        The private output, the budgets, the mechanism and the reports.

    Warns
    -----
    TopCodingWarning
        The privatized target puts more than
        :data:`dpfix.release.bounds.TOP_MASS_WARNING` of its mass on ``upper``
        (post-processing of private outputs: no privacy cost).

    Raises
    ------
    NotPrivateError
        The mechanism's realized level exceeds ``eps_2``, its sampling table
        fails the exact check (or the discrete Gaussian's delta exceeds
        ``delta``): no row is touched.
    TimeLimitReached
        The LP hit ``time_limit``.
    ValueError
        On bad input, named by its cause: masked entries of a masked array,
        missing values (pandas NA, NaN), uint64 values above ``2^63 - 1``.

    Examples
    --------
    >>> r = privatize_counts([0, 0, 1, 3, 9], 1.0, upper=3, split=0.5, seed=1)
    >>> r.eps_1, r.eps_2, r.n, r.N, r.topcoded, r.privacy_level <= r.eps_2
    (0.5, 0.5, 4, 5, 1, True)
    >>> bool(r.estimated_count_error == r.mechanism.count_error(r.z, "abs"))
    True
    >>> h = privatize_counts(None, 1.0, upper=2, histogram=[5 * 10**13, 3 * 10**13, 2 * 10**13],
    ...                      seed=0)
    >>> h.N, h.counts, int(h.output_histogram.sum())
    (100000000000000, None, 100000000000000)
    """
    options = method_options(constructor=constructor, selector=selector, split=split,
                             privatizer=privatizer, postprocess=postprocess, solver=solver,
                             time_limit=time_limit, framework=framework, estimator=estimator,
                             remap=remap)
    return privatize(counts, eps, options, upper=upper, histogram=histogram, seed=seed,
                     delta=delta, progress=progress, on_stage=on_stage, draw=draw,
                     upper_share=upper_share)
