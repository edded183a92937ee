"""Shared drawing helpers (matplotlib with the Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from dpfix.numbers.numeric import require

__all__ = ["figure", "band", "save", "STYLES", "note", "MIN_CI_REPLICATIONS", "legend_below"]

#: CI bands are drawn from this many replications on (t with 1 df is 12.7: no use).
MIN_CI_REPLICATIONS = 3

#: method -> line style: fixed-point methods solid, unfixed baselines dashed.
STYLES: dict[str, dict[str, Any]] = {
    "heuristic-max": {"color": "tab:blue", "ls": "-", "marker": "v"},
    "heuristic-min": {"color": "tab:cyan", "ls": "-", "marker": "^"},
    "heuristic-sandwich": {"color": "tab:green", "ls": "-", "marker": "s"},
    "heuristic-best": {"color": "darkgreen", "ls": "-", "marker": "*"},
    "lp-simplex": {"color": "black", "ls": "-", "marker": "o"},
    "lp-ipm": {"color": "tab:gray", "ls": "-", "marker": "x"},
    "unfixed": {"color": "tab:red", "ls": "--", "marker": "D"},
    "truncated-geometric": {"color": "tab:orange", "ls": "--", "marker": "<"},
    "staircase": {"color": "tab:brown", "ls": ":", "marker": ">"},
    "discrete-gaussian": {"color": "tab:purple", "ls": "--", "marker": "P"},
    "laplace": {"color": "tab:orange", "ls": "--", "marker": "o"},
    "privelet": {"color": "tab:purple", "ls": "--", "marker": "s"},
    "hierarchical": {"color": "tab:brown", "ls": "--", "marker": "^"},
    "cyclic-laplace": {"color": "black", "ls": "-", "marker": "D"},
}


def figure(rows: int, cols: int, width: float = 5.0, height: float = 3.6) -> tuple[Any, Any]:
    """A figure of ``rows x cols`` panels (a 2-d array of axes)."""
    matplotlib = require("matplotlib")

    matplotlib.use("Agg")
    plt = require("matplotlib.pyplot")

    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    return fig, axes


def band(ax: Any, x: Any, mean: Any, half: Any, label: str, style: dict | None = None,
         show: bool = True) -> None:
    """A line with markers and a shaded 95% CI band (none where the CI is NaN, none
    at all unless ``show``). On a log axis a lower edge at or below 0 is drawn at
    ``mean / 10`` (the CSVs keep the true interval)."""
    x, mean, half = (np.asarray(v, dtype=float) for v in (x, mean, half))
    order = np.argsort(x)
    x, mean, half = x[order], mean[order], half[order]
    style = dict(style or {})
    ax.plot(x, mean, label=label, markersize=4, linewidth=1.3, **style)
    ok = np.isfinite(half)
    if show and ok.any():
        low = mean - half
        if ax.get_yscale() == "log":
            low = np.where(low > 0, low, mean / 10)
        ax.fill_between(x[ok], low[ok], (mean + half)[ok], alpha=0.12,
                        color=style.get("color"), linewidth=0)


def note(fig: Any, text: str) -> None:
    """A small caption at the bottom of the figure (data substitutions, criteria)."""
    fig.text(0.5, 0.005, text, ha="center", va="bottom", fontsize=7.5, wrap=True)


def legend_below(fig: Any, ax: Any, ncol: int = 4) -> float:
    """One legend for the whole figure, under the panels (above the caption); returns
    the share of the height it takes, for :func:`save`'s ``bottom``."""
    handles, labels = ax.get_legend_handles_labels()
    rows = -(-len(labels) // ncol)
    height = fig.get_figheight()
    share = (0.19 * rows + 0.3) / height
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=7.5, frameon=False,
               bbox_to_anchor=(0.5, 0.28 / height))
    return share + 0.02


def save(fig: Any, path: str | Path, dpi: int = 90, bottom: float = 0.05) -> Path:
    """Save as PNG (tight layout, ``bottom`` of the height left for legend and caption)
    and close the figure."""
    plt = require("matplotlib.pyplot")

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=(0, bottom, 1, 1))
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
