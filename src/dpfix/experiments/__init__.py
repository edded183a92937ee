"""Floor 8, experiments: the experiments of the paper's Section 6, reproducible with one
command.

``dpfix reproduce fig3|fig5|fig6|fig7|table3|frontier|all`` (see :mod:`dpfix.reproduce`)
runs them through :func:`reproduce`:

- :mod:`~dpfix.experiments.privatizer_error`: Figure 3, the distribution
  privatizers' Wasserstein-1 vs ``n`` at eps_1 = 1;
- :mod:`~dpfix.experiments.accuracy`: Figures 5 and 6, Wasserstein-1 and
  expected absolute deviation vs eps_t for every method, and the comparison
  with the numbers the paper reports;
- :mod:`~dpfix.experiments.runtime`: Figure 7, seconds per privatization vs ``n``;
- :mod:`~dpfix.experiments.split`: Table 3 and Figure 8, the best budget
  split and the fitted rule of thumb;
- :mod:`~dpfix.experiments.frontier`: the frontier study, count error
  against W1 of the two-stage, one-stage and hybrid frameworks beside the
  limit (the northwest corner at the true distribution), and the
  data-independent rule choosing among them;
- :mod:`~dpfix.experiments.resolution`: what the bounds study's 20 releases resolve
  (paired bootstrap intervals of its target ratios; docs/bounds.md section 3);
- :mod:`~dpfix.experiments.coverage`: the coverage study of the stated uncertainty
  (docs/uncertainty.md section 6), run by ``python -m dpfix.experiments.coverage``.

Every experiment is a list of *cells* (:mod:`~dpfix.experiments.cells`): one
seeded privatization each, computed in parallel, cached in the output folder
and never recomputed.

May import: every floor below (among them :mod:`dpfix.io` and :mod:`dpfix.release`).
"""

from dpfix.experiments import accuracy, frontier, privatizer_error, runtime, split
from dpfix.experiments.cells import (
    CellCache,
    cell_seed,
    compute_cell,
    key_id,
    mean_ci,
    run_cells,
    summarise,
)
from dpfix.experiments.config import Config, make_config
from dpfix.experiments.runs import DATASETS, METHODS, eps_grid, load_counts, run_method
from dpfix.experiments.targets import TARGETS, TargetReport, check_data, reproduce

__all__ = [
    "reproduce", "TARGETS", "TargetReport", "check_data", "Config", "make_config",
    "CellCache", "cell_seed", "compute_cell", "key_id", "mean_ci", "run_cells", "summarise",
    "DATASETS", "METHODS", "eps_grid", "load_counts", "run_method",
    "accuracy", "frontier", "privatizer_error", "runtime", "split",
]
