"""The figure of a release: each column's public target ``z`` and output distribution, and
the band of its report's stated uncertainty for the true top-coded CDF.

All are differentially private releases (or computed from them); the true distribution
is never drawn. One panel per column (:func:`make_figures`), or one figure of one column
(:func:`make_figure`), from a ``PrivatizedCounts`` or a column of a release's public
report. matplotlib (the ``production`` extra) is imported only when a figure is drawn
(:func:`dpfix.numbers.numeric.require`).
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING, Any

import numpy as np

from dpfix.numbers.numeric import require

if TYPE_CHECKING:  # pragma: no cover
    from dpfix.release.result import PrivatizedCounts

__all__ = ["make_figure", "make_figures", "panel_title", "shares_text"]


def panel_title(ax: Any, title: str, details: str) -> str:
    """``title`` and ``details`` on lines that fit the width of ``ax``'s figure.

    The title leads its own line(s), the details follow; each is wrapped at the
    number of characters of the title's font that the figure's width holds
    (an average character is about 0.6 of the font size wide), so that no
    line runs past the figure's edge however long a file or column name is.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure(figsize=(4, 3)).add_subplot()
    >>> panel_title(ax, "counts.csv (MURDER)", "eps_t = 1 (eps_1 = 0.233, eps_2 = 0.767), "
    ...             "northwest, N = 3136").splitlines()
    ['counts.csv (MURDER)', 'eps_t = 1 (eps_1 = 0.233, eps_2 =', '0.767), northwest, N = 3136']
    """
    fig = ax.get_figure()
    size = ax.title.get_fontsize()
    chars = max(20, int(fig.get_figwidth() * 72 / (0.6 * size)) - 4)
    return "\n".join(textwrap.fill(part, chars) for part in (title, details))


def shares_text(budget: dict, upper: int) -> str:
    """Every share of a column's budget, as a figure's title states it: ``eps_t``, the bound's
    ``eps_upper`` (a bound chosen privately), ``eps_1`` and ``eps_2``.

    Examples
    --------
    >>> shares_text({"eps_t": 0.5, "eps_upper": 0.01, "eps_1": 0.1, "eps_2": 0.39}, 697)
    'eps_t = 0.5 (eps_upper = 0.01 for upper = 697, eps_1 = 0.1, eps_2 = 0.39)'
    >>> shares_text({"eps_t": 1.0, "eps_upper": 0.0, "eps_1": 0.233, "eps_2": 0.767}, 50)
    'eps_t = 1 (eps_1 = 0.233, eps_2 = 0.767)'
    """
    parts = [f"eps_upper = {budget['eps_upper']:.3g} for upper = {upper}"] \
        if budget.get("eps_upper") else []
    parts += [f"eps_1 = {budget['eps_1']:.3g}", f"eps_2 = {budget['eps_2']:.3g}"]
    return f"eps_t = {budget['eps_t']:g} ({', '.join(parts)})"


def _band(ax: Any, c: dict, x: np.ndarray) -> None:
    """The distribution band of the column's report (if it has one) on a second axis: the
    target's CDF and the ``(1 - alpha)`` band around the true top-coded CDF."""
    band = (c.get("uncertainty") or {}).get("distribution_band") or {}
    if "cdf_lower" not in band:
        return
    cdf = ax.twinx()
    cdf.fill_between(x, band["cdf_lower"], band["cdf_upper"], step="mid", color="tab:green",
                     alpha=0.2, label=f"{100 * band['level']:.3g}% band for the true CDF")
    if c["target_z"] is not None:
        cdf.step(x, np.cumsum(c["target_z"]), where="mid", color="tab:green", linewidth=1,
                 label="CDF of z")
    cdf.set_ylim(0, 1.02)
    cdf.set_ylabel("cumulative share")
    cdf.legend(loc="center right")


def _draw(ax: Any, result: Any, title: str) -> None:
    """The target and the output distribution of one privatization on ``ax``: a
    PrivatizedCounts or a column's public report (both public), with the distribution band
    of the report's ``uncertainty``."""
    c = result if isinstance(result, dict) else result.public_report()
    x = np.arange(c["n"])
    ax.bar(x, c["output_distribution"], width=0.9, color="tab:blue", alpha=0.6,
           label="output distribution of counts")
    if c["target_z"] is not None:
        ax.plot(x, c["target_z"], "o-", color="tab:red", markersize=3, linewidth=1,
                label="public target z")
    ax.set_xlabel("count")
    ax.set_ylabel("share of rows")
    ax.set_title(panel_title(ax, title, f"{shares_text(c['budget'], c['n'] - 1)}, "
                                        f"{c['mechanism']['constructor']}, N = {c['N']}"))
    ax.legend()
    _band(ax, c, x)


def make_figures(results: list, titles: list[str]) -> Any:
    """Several privatizations (the columns of one run) as one figure, one panel each:
    PrivatizedCounts, or the columns of a release's public report.

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> rs = [privatize_counts([0, 1, 1, 2], 0.5, upper=2, seed=s) for s in (0, 1)]
    >>> len(make_figures(rs, ["t (a)", "t (b)"]).axes)
    2
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    fig = Figure(figsize=(8, 3.6 * len(results)), layout="constrained")
    FigureCanvasAgg(fig)
    for k, (result, title) in enumerate(zip(results, titles, strict=True)):
        _draw(fig.add_subplot(len(results), 1, k + 1), result, title)
    return fig


def make_figure(result: PrivatizedCounts, title: str) -> Any:
    """The public target ``z`` and the output distribution of counts, as a figure.

    Both are private releases; the true distribution is never drawn.

    Parameters
    ----------
    result : dpfix.release.result.PrivatizedCounts
    title : str
        Leads the figure's title (the budgets, constructor and ``N`` follow).

    Returns
    -------
    matplotlib.figure.Figure
        On the Agg canvas (no display needed).

    Examples
    --------
    >>> from dpfix.release.pipeline import privatize_counts
    >>> fig = make_figure(privatize_counts([0, 1, 1, 2], 1.0, upper=2, seed=0), "demo")
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['public target z', 'output distribution of counts']
    """
    FigureCanvasAgg = require("matplotlib.backends.backend_agg").FigureCanvasAgg
    Figure = require("matplotlib.figure").Figure

    fig = Figure(figsize=(8, 4.5), layout="constrained")
    FigureCanvasAgg(fig)
    _draw(fig.add_subplot(), result, title)
    return fig
