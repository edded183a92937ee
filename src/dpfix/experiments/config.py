"""The sizes of a reproduction run: the full run (the paper's) and ``--quick``."""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["Config", "make_config"]


@dataclass(frozen=True)
class Config:
    """What each experiment runs; ``make_config`` gives the full and quick sizes.

    ``eps_index`` and ``split_eps_index`` select points of the eps_t grid
    ``10^linspace(-1, log10 5, 11)`` (index 4 is 0.481, index 6 is 1.057).
    The frontier study has its own replications: at least 50 in the full run; the bounds
    study 20 (5 quick).
    """

    quick: bool
    replications: int
    seed: int
    eps_index: tuple[int, ...]
    accuracy_datasets: tuple[str, ...]
    accuracy_methods: tuple[str, ...]
    postprocess: tuple[str, ...]
    fig3_n: tuple[int, ...]
    fig3_eps: float
    fig3_methods: tuple[str, ...]
    fig7_n: tuple[int, ...]
    fig7_methods: tuple[str, ...]
    fig7_lp_cap: float
    fig7_replications: int
    split_f: tuple[float, ...]
    split_eps_index: tuple[int, ...]
    split_method: str
    frontier_datasets: tuple[str, ...]
    frontier_eps_index: tuple[int, ...]
    frontier_settings: tuple[str, ...]
    frontier_replications: int
    frontier_pareto_eps_index: tuple[int, ...]
    bounds_replications: int


_ACCURACY_METHODS = ("heuristic-max", "heuristic-min", "heuristic-sandwich", "heuristic-best",
                     "lp-simplex", "unfixed", "truncated-geometric", "staircase",
                     "discrete-gaussian")
_FIG7_METHODS = ("heuristic-sandwich", "lp-simplex", "lp-ipm", "unfixed", "truncated-geometric",
                 "staircase", "discrete-gaussian")

#: The frontier study's settings (names of dpfix.experiments.frontier.SETTINGS).
_FRONTIER_SETTINGS = ("two-stage", "one-stage/em/northwest", "one-stage/em/quantile",
                      "one-stage/em-smooth/northwest", "one-stage/least-squares/northwest",
                      "hybrid/f=0.02/em/northwest", "hybrid/f=0.05/em/northwest",
                      "hybrid/f=0.1/em/northwest", "hybrid/f=0.2/em/northwest",
                      "hybrid/f=0.35/em/northwest", "hybrid/rot/em/northwest")

_FULL = Config(
    quick=False, replications=10, seed=0,
    eps_index=tuple(range(11)),
    accuracy_datasets=("binomial", "crime"),
    accuracy_methods=_ACCURACY_METHODS,
    postprocess=("isotonic-cdf", "clip-renormalise"),
    fig3_n=(5, 10, 20, 51, 101, 201, 501, 1001),
    fig3_eps=1.0,
    fig3_methods=("laplace", "privelet", "hierarchical", "cyclic-laplace"),
    fig7_n=(10, 20, 50, 100, 150, 200, 300, 500, 1000, 2000, 5000),
    fig7_methods=_FIG7_METHODS,
    fig7_lp_cap=60.0,
    fig7_replications=3,
    split_f=(0.01, 0.02, 0.03, 0.04) + tuple(round(0.05 * k, 2) for k in range(1, 20)),
    split_eps_index=tuple(range(11)),
    split_method="heuristic-best",
    frontier_datasets=("crime", "binomial", "uniform", "left-skewed", "right-skewed", "bimodal",
                       "top-inflated", "zero-inflated"),
    frontier_eps_index=tuple(range(11)),
    frontier_settings=_FRONTIER_SETTINGS,
    frontier_replications=50,
    frontier_pareto_eps_index=(0, 4, 6, 10),
    bounds_replications=20,
)

_QUICK = replace(
    _FULL, quick=True, replications=2,
    eps_index=(0, 4, 6),
    fig3_n=(10, 51, 201),
    fig7_n=(10, 20, 50, 100),
    fig7_lp_cap=2.0,
    fig7_replications=1,
    split_f=(0.1, 0.3, 0.5, 0.7, 0.9),
    split_eps_index=(0, 4, 6, 10),
    frontier_datasets=("crime", "binomial"),
    frontier_eps_index=(3, 6, 10),
    frontier_settings=("two-stage", "one-stage/em/northwest", "one-stage/em/quantile",
                       "hybrid/f=0.1/em/northwest", "hybrid/rot/em/northwest"),
    frontier_replications=2,
    frontier_pareto_eps_index=(3, 6, 10),
    bounds_replications=5,
)


def make_config(quick: bool = False, replications: int | None = None, seed: int = 0) -> Config:
    """The full run (the paper's sizes) or the quick one, with optional overrides.

    ``replications`` applies to every experiment but the runtime one, which
    times at most 3 replications (the frontier study too: its full run has 50).

    Examples
    --------
    >>> c = make_config(quick=True)
    >>> c.replications, c.eps_index, c.fig7_lp_cap
    (2, (0, 4, 6), 2.0)
    >>> make_config(replications=4).fig7_replications
    3
    >>> make_config().frontier_replications, make_config(replications=60).frontier_replications
    (50, 60)
    """
    cfg = _QUICK if quick else _FULL
    if replications is not None:
        if isinstance(replications, bool) or not isinstance(replications, int) \
                or replications < 1:
            raise ValueError(f"replications: must be an integer >= 1, got {replications!r}")
        cfg = replace(cfg, replications=replications,
                      fig7_replications=min(replications, 3),
                      frontier_replications=replications,
                      bounds_replications=replications)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed: must be a non-negative integer, got {seed!r}")
    return replace(cfg, seed=seed)
