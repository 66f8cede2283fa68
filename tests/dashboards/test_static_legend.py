"""A static figure's legend (the notebook's and the report's copies, issue 49): one row when
it fits the narrowest figure, else two columns, and the figure never narrower than its
widest legend row, so a grid of figures cannot clip a legend."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("panel")

from icml26.dashboards.app.live import (  # noqa: E402
    LEGEND_CHAR_PX,
    LEGEND_ITEM_PX,
    LEGEND_ROW_PX,
    LEGEND_SIDE_PX,
    Chart,
    Series,
    figure,
    static_legend_shape,
)

LADDERS = ["(a) steady state", "(b) steeper", "(c) delta = 0", "(d) shallower (naive)"]


def test_a_short_legend_stays_one_row_at_the_narrowest_width():
    assert static_legend_shape(["DP", "MC"]) == (2, 300)


def test_a_long_legend_wraps_to_two_columns_and_widens_the_figure():
    cols, width = static_legend_shape(LADDERS)
    widest_pair = max(2 * LEGEND_ITEM_PX + LEGEND_CHAR_PX * (len(a) + len(b))
                      for a, b in (LADDERS[:2], LADDERS[2:]))
    assert cols == 2 and width == int(LEGEND_SIDE_PX + widest_pair) > 300


def test_the_static_figure_takes_the_shape():
    x = np.linspace(0, 1, 5)
    chart = Chart("levels", "period t", "level", [Series(c, x, x, label)
                  for c, label in zip(["red", "blue", "green", "black"], LADDERS)])
    fig = figure(chart)
    (legend,) = fig.above
    assert legend.ncols == 2 and fig.min_width == static_legend_shape(LADDERS)[1]
    # the second legend row adds its height: the frame keeps the one-row figure's
    one_row = figure(Chart("levels", "period t", "level", [Series("red", x, x, "a")]))
    assert fig.height == one_row.height + LEGEND_ROW_PX
    assert figure(chart, live=True).above == []  # a live figure's legend is HTML
