"""Explorer of heima without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

from dataclasses import replace

import pytest

pn = pytest.importorskip("panel")

from icml26.dashboards import heima as app  # noqa: E402


@pytest.mark.parametrize("hops", [1, 2, 3, 4])
def test_token_readout_follows_the_formats(hops):
    e = app.Explorer(hops=hops)
    chart = e.tokens_chart()
    ratio = (10 * hops + 2) / (hops + 2)
    assert f"{ratio:.1f}x" in chart.title
    marks = [s for s in chart.series if s.kind == "scatter"]
    assert [float(s.y[0]) for s in marks] == [2, 10 * hops + 2, hops + 2]


def test_depth_chart_says_when_the_hops_fit():
    assert "fits" in app.Explorer(hops=2, n_layers=4).depth_chart().title
    assert "does not fit" in app.Explorer(hops=4, n_layers=4).depth_chart().title


def test_settings_map_to_the_lib_config():
    cfg = app.Explorer(hops=3, n_layers=5, interp_weight=0.0, detach=True).config()
    assert (cfg.hops, cfg.limit_hops, cfg.n_layers) == (3, (3,), 5)
    assert cfg.train_config("heima").interp_weight == 0 and cfg.train_config("heima").detach
    assert app.Explorer(progressive=True).kinds()[-1] == "progressive"


def test_run_trains_and_fills_the_views(tmp_path, monkeypatch):
    """A tiny Run (cache in tmp): every result view gets data, the caption names the run."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    e = app.Explorer(steps=100, d_model=16, n_layers=2, hops=1)
    config = app.Explorer.config
    monkeypatch.setattr(app.Explorer, "config", lambda self: replace(config(self), eval_n=16))
    e.param.trigger("run")
    assert e.run_done == 1, e.error_message()
    data = e.plot_data()
    assert {r["kind"] for r in data["pareto"]} == {"nocot", "cot", "heima", "pause"}
    assert data["gap"] and data["curves"]
    assert "100 steps" in e._caption.object
    for view in (e.pareto_view(), e.gap_view(), e.curve_view()):
        assert view is not None and view.series
