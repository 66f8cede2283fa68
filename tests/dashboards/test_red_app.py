"""Explorer of red without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import math

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from icml26 import red  # noqa: E402
from icml26.dashboards import red as app  # noqa: E402


def test_live_charts_name_their_axes():
    e = app.Explorer()
    for chart_fn in e.live_charts():
        c = chart_fn()
        assert c.x_label.lower() not in ("x", "y") and c.y_label.lower() not in ("x", "y")
        assert all(np.isfinite(s.y).all() for s in c.series if s.kind != "hline"
                   and s.kind != "vline")


def test_outlier_view_shows_the_teachers_outlier_channel():
    """The shipped teacher (issue 34's second design) has a channel well above the bar 4 in
    every layer (6.1-6.6x the median; the next one 4.0-4.5x), and the rest below it."""
    c = app.Explorer().outlier_view()
    layers = c.series[1:]
    assert all(float(s.y[0]) > 1.3 * app.OUTLIER_BAR > app.OUTLIER_BAR > float(s.y[2])
               for s in layers)
    assert list(c.series[0].y) == [app.OUTLIER_BAR] * 2  # the bar, inside the axis range


def test_spectrum_view_follows_the_width():
    e = app.Explorer(ratio=0.25)
    lines = {s.label: s for s in e.spectrum_view().series}
    assert len(lines[app.LABELS["gaussian"]].y) == 32
    np.testing.assert_allclose(lines[app.LABELS["red"]].y, 1.0, atol=1e-5)
    e.ratio = 0.75
    assert len(e.spectrum_view().series[0].y) == 96


def test_toy_with_and_without_outlier_channels():
    """Flat channels: every selection keeps the same eRank, a Gaussian P less. Strong
    outliers (sigma = 2): the eRank collapses; selection by activation stays above Gaussian at
    every width, while a random selection swings with the outliers it happens to drop."""
    flat, strong = app._toy(0.0, 0), app._toy(2.0, 0)
    np.testing.assert_allclose(flat["red"], flat["random_select"], rtol=0.02)
    assert all(r > g for r, g in zip(flat["red"], flat["gaussian"]))
    assert strong["full"] < 0.2 * flat["full"]
    assert all(r > g for r, g in zip(strong["red"], strong["gaussian"]))


def test_no_initialisation_is_an_error_message():
    e = app.Explorer()
    e.inits = []
    assert "at least one" in e.error_message()
    e.param.trigger("run")
    assert e.run_done == 0
    e.inits = ["red"]
    assert e.error_message() == ""


def test_run_distils_each_chosen_init():
    e = app.Explorer(inits=["gaussian", "red"], distill_steps=10, ratio=0.25)
    assert all(c() is None for c in e.run_charts()) and "press **Run**" in e.result_note()
    e.param.trigger("run")
    assert e.run_done == 1 and e.error_message() == ""
    students = e.plot_data()["students"]
    assert list(students) == ["gaussian", "red"]
    assert all(len(s["p0_singular"]) == 32 for s in students.values())
    erank, acc, ckpt = (c() for c in e.run_charts())
    assert erank.y_label == "eRank of the hidden states" and acc.x_label == "hops"
    assert all(math.isfinite(v) for s in ckpt.series for v in s.y)
    assert "d' = 32" in e.result_note() and "10 steps" in e.result_note()
    assert red.MAX_HOPS == 3
