"""``dpfix privatize --plot``: every panel's title lies inside the figure, also with two
columns and long names (measured on the rendered figure, Agg renderer)."""

from __future__ import annotations

import numpy as np
import pytest

from dpfix.release.figures import make_figure, make_figures
from dpfix.release.pipeline import privatize_counts


def _results(k: int) -> list:
    rng = np.random.default_rng(4)
    return [privatize_counts(rng.poisson(3, 3136), 1.0, upper=50, seed=s) for s in range(k)]


def assert_titles_inside(fig) -> None:
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    for ax in fig.axes:
        extent = ax.title.get_window_extent(renderer)
        assert ax.title.get_text()
        assert (extent.x0 >= box.x0 and extent.x1 <= box.x1 and extent.y0 >= box.y0
                and extent.y1 <= box.y1), (ax.title.get_text(), extent, box)
        # nor over its own axes' plotting area
        assert extent.y0 >= ax.get_window_extent(renderer).y1 - 1, ax.title.get_text()


@pytest.mark.parametrize("name", ["crime_data.csv", "a_much_longer_file_name_of_counts_2024.csv"])
def test_two_column_figure_titles_fit(name):
    results = _results(2)
    fig = make_figures(results, [f"{name} (MURDER)", f"{name} (RAPE)"])
    assert_titles_inside(fig)


def test_one_column_figure_title_fits():
    fig = make_figure(_results(1)[0], "x" * 30 + " " + "county_homicides_by_year.csv")
    assert_titles_inside(fig)
