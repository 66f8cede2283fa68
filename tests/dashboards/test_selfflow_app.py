"""Explorer of selfflow without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from icml26 import selfflow  # noqa: E402
from icml26.dashboards import selfflow as app  # noqa: E402
from icml26.dashboards.app import run_costs  # noqa: E402


def test_default_settings_are_the_claims_config():
    """A default Run reuses the models the claims trained (same cache key)."""
    assert app.Explorer().config() == selfflow.config_for("quick")


@pytest.fixture
def record(tmp_path, monkeypatch):
    """An empty cache and a recorded default Run (600 steps x 4 models: 240 s CPU)."""
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "timings.csv"
    path.write_text("timestamp,machine,cores,app,wall_s,cpu_s,load_1min,stage\n"
                    "t,x86_64,2,selfflow,900.0,240.0,9.5,done\n")
    monkeypatch.setattr(run_costs, "TIMINGS_CSV", path)


def test_the_page_says_before_a_run_that_it_trains_and_how_long(record):
    """Issue 32: a Run from an empty cache took over 6 minutes and said "(cached)". Now the
    page says before the Run that it trains, for how long (from the recorded Run), and
    offers a cheaper Run; once the models are cached it says the Run reads them."""
    e = app.Explorer()
    plan = e._plan.object
    assert "the claims' models" in plan and "trains 4 of 4 models (600 steps" in plan
    assert "about 4.0 min on an idle core" in plan and "15.0 min wall" in plan  # 240 s CPU
    assert f"*Steps* {app.SHORT_STEPS}, about 80 s" in plan
    assert "(cached)" not in e.param.steps.doc and "800" not in e.param.steps.doc
    assert "took 4.0 min of CPU" in app.create_app().objects[0].object  # the intro
    e.steps = 300
    assert "not the claims' models" in e._plan.object


def test_schedule_charts_follow_the_settings():
    e = app.Explorer()
    c = e.schedule_chart()
    assert c.x_label.startswith("noise level") and c.y_label == "density"
    labels = [s.label for s in c.series]
    assert "teacher" in labels and "vanilla (one t)" in labels
    e.mask_noise = "full"
    masked = next(s for s in e.schedule_chart().series if s.label == "student, masked tokens")
    assert masked.y[-1] > 0 and np.allclose(masked.y[:-1], 0)  # all mass at tau = 1
    ex = e.example_chart()
    students = [s for s in ex.series if s.kind == "scatter"]
    assert len(students) == 3 and all(len(s.x) == 16 for s in students)


def test_bad_layers_show_an_alert():
    e = app.Explorer(student_layer=3, teacher_layer=2)
    assert "deeper" in e.error_message()
    e.teacher_layer = 3
    assert "deeper" in e.error_message()
    e.student_layer = 1
    assert e.error_message() == ""


def test_result_views_before_run():
    e = app.Explorer(recorded=False)  # as before any Run
    assert e.probe_view() is None and e.loss_view() is None
    assert "press **Run**" in e.result_note()


def test_plot_functions_on_synthetic_results():
    rows = [{"variant": v, "seed": s, "probe": p[0], "layer": layer, "acc": 0.1 * layer + s}
            for v in selfflow.VARIANTS for s in (0, 1) for p in selfflow.PROBES
            for layer in range(4)]
    rows += [{"variant": "raw pixels", "seed": 0, "probe": p[0], "layer": -1, "acc": 0.5}
             for p in selfflow.PROBES]
    summary = selfflow.probe_summary(rows)
    chart = app.probe_chart(summary, selfflow.PROBES[0][0])
    assert "2 seeds" in chart.title
    assert any(s.dash == "dotted" for s in chart.series)  # +- SE lines
    assert any(s.kind == "hline" and s.at == 0.5 for s in chart.series)
    curves = {v: [(50, 1.0, 0.1), (100, 0.8, 0.05)] for v in selfflow.VARIANTS}
    assert len(app.loss_chart(curves).series) == 4
    samples = {v: np.zeros((8, 8, 8)) for v in selfflow.VARIANTS}
    img = app.sample_mosaic(samples)
    assert img.dimension_values(2, flat=False).shape == (40, 80)  # 4 rows of 8 padded 10x10


def test_run_at_a_tiny_config(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    tiny = dataclasses.replace(
        selfflow.config_for("quick"),
        train=dataclasses.replace(selfflow.config_for("quick").train,
                                  model=selfflow.DiTConfig(dim=16, depth=4, heads=2),
                                  batch=16),
        n_test=60, sample_n=8, sample_steps=3, fm_draws=1)
    monkeypatch.setattr(app, "QUICK", tiny)
    seen = []
    trained = selfflow.trained

    def spy(*args, **kwargs):  # the stage text while a model trains (the cache is empty)
        out = trained(*args, **kwargs)
        seen.append(e._stage.object)
        return out

    monkeypatch.setattr(selfflow, "trained", spy)
    e = app.Explorer(steps=100)
    assert "trains 4 of 4 models (100 steps" in e._plan.object
    e.param.trigger("run")
    assert e.run_done == 1 and e.error_message() == ""
    assert len(seen) == 4 and all("not in the cache: training now" in t for t in seen), seen
    assert "(cached)" not in " ".join(seen)
    assert "computed, now cached: 4 of 4 stages" in e._stage.object
    assert "reads the four models from the cache" in e._plan.object
    e.param.trigger("run")  # again: every stage reads the cache, none says training
    assert "(read from the cache)" in seen[-1] and "training" not in seen[-1]
    chart = e.probe_view()
    assert chart is not None and chart.y_label == "probe accuracy"
    assert "Self-Flow / vanilla" in e.result_note()
    e.probe = selfflow.PROBES[0][0]
    assert selfflow.PROBES[0][0] in e.probe_view().title
