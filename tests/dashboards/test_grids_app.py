"""Explorer of grids without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import math

import pytest

pn = pytest.importorskip("panel")

from icml26 import grids  # noqa: E402
from icml26.dashboards import grids as app  # noqa: E402

TINY = grids.GridsConfig(n_train=48, n_test=16, pretrain_steps=3, head_steps=3, batch=8)


def test_live_charts_name_their_axes_and_follow_k():
    e = app.Explorer()
    for chart in (e.flops_live(), e.layout_live()):
        assert chart.x_label.lower() not in ("x", "y") and chart.y_label.lower() not in ("x", "y")
    assert "27.7%" in e.flops_live().title  # K = 4: N = 5 of the 17 the run has (16 tokens + 1)
    e.k = 16
    start = [s for s in e.layout_live().series if s.label == "GridS start"][0]
    assert len(start.x) == 16 and start.x.min() > 0 and start.x.max() < 63
    e.margin = 0.2
    start = [s for s in e.layout_live().series if s.label == "GridS start"][0]
    assert start.x.min() >= 0.2 * 63 - 1e-3 and start.x.max() <= 0.8 * 63 + 1e-3


def test_config_follows_the_widgets_and_defaults_are_valid():
    e = app.Explorer(temperature=2.0, clutter=3, contact_radius=1.0, scout_input="mean")
    cfg = e.config()
    assert cfg.policy.temperature == 2.0 and cfg.policy.scout_input == "mean"
    assert (cfg.scene.clutter, cfg.scene.contact_radius) == (3, 1.0)
    assert e.error_message() == ""


def test_run_trains_and_draws_results(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    monkeypatch.setattr(grids, "config_for", lambda scale: TINY)
    e = app.Explorer(method="avgpool", k=4)
    assert all(c() is None for c in e.run_charts()) and "press **Run**" in e.result_note()
    e.param.trigger("run")
    assert e.run_done == 1 and "Run done" in e._stage.object, e.error_message()
    errors, points = (c() for c in e.run_charts())
    assert {s.label for s in errors.series} >= {"average pool", "all tokens"}
    assert len(points.series[1].x) == 4
    assert all(math.isfinite(r["error_px"]) for r in e.plot_data()["runs"])
    assert "average pool at K = 4" in e.result_note()
