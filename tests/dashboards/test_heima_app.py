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
    assert "100 steps" in e._result_caption.object
    for view in (e.pareto_view(), e.gap_view(), e.curve_view()):
        assert view is not None and view.series


def test_the_page_says_before_a_run_that_it_trains_and_how_long(tmp_path, monkeypatch):
    """Issue 32: heima's default Run from an empty cache took 459 s in the browser and the page
    said "about 20-40 s of CPU per model". Now it says before the Run how many models it
    trains and how long (scaled from the recorded default Run by training steps: CoT trains
    twice the steps), and once the models are in the cache, that it reads them."""
    from icml26 import common, heima
    from icml26.dashboards.app import run_costs

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = tmp_path / "timings.csv"
    record.write_text("timestamp,machine,cores,app,wall_s,cpu_s,load_1min,stage\n"
                      "t,x86_64,2,heima,459.0,300.0,4.0,done\n")
    monkeypatch.setattr(run_costs, "TIMINGS_CSV", record)
    e = app.Explorer()
    plan = e._plan.object
    assert "the claims' models" in plan and "trains 4 of 4 models" in plan
    assert "about 5.0 min on an idle core" in plan and "7.7 min wall" in plan  # 5 x 600 steps
    e.steps = 300
    assert "not the claims' models" in e._plan.object and "2.5 min" in e._plan.object
    e.steps = 600
    cfg = e.config()
    for kind in e.kinds()[:2]:  # no-CoT and CoT (2 units) cached: 2 of 5 step units left
        tcfg = cfg.train_config(kind)
        path = common.cache_path(heima.PAPER, common.device_key("model", "cpu"),
                                 {"train": tcfg, "eval_n": cfg.eval_n}, 0, heima.CACHE_VERSION)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    e.seed = 1
    e.seed = 0  # the plan is recomputed on a settings change
    assert "trains 2 of 4 models" in e._plan.object and "2.0 min" in e._plan.object
    for kind in e.kinds()[2:]:
        tcfg = cfg.train_config(kind)
        common.cache_path(heima.PAPER, common.device_key("model", "cpu"),
                          {"train": tcfg, "eval_n": cfg.eval_n}, 0, heima.CACHE_VERSION).touch()
    e.seed = 1
    e.seed = 0
    assert "reads its 4 models from the cache" in e._plan.object
