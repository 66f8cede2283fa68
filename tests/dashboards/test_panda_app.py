"""The PANDA Explorer: the schedule as live charts, the landscape + methods behind one Run
(run_stages), its figures drawn when ``run_done`` moves."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402

from icml26 import panda as lib  # noqa: E402
from icml26.dashboards import panda as app  # noqa: E402


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))


def test_the_default_run_is_the_claims_run_and_the_short_run_an_option(tmp_cache):
    """A Run at the defaults is icml26.panda.claims(seed)'s experiment (the same config, so
    the same cache entry), not the old 100-step default that made PANDA look worst (Phi/Phi*
    13.3 on seed 0); the short run is offered, and the page says what a Run costs before it."""
    quick = lib.config_for("quick")
    e = app.Explorer()
    assert e.config() == quick and e.iterations == quick.panda.iterations == 6000
    assert app.SHORT_ITERATIONS < quick.panda.iterations
    short = app.Explorer(iterations=app.SHORT_ITERATIONS).config()
    assert short == replace(quick, panda=replace(quick.panda, iterations=app.SHORT_ITERATIONS,
                                                 record_every=1))
    assert str(app.SHORT_ITERATIONS) in app.Explorer.param.iterations.doc
    # before the Run: not cached here, so it says it computes and for how long (from the
    # recorded timings: minutes for 6000 steps), and offers the short run
    plan = e._plan.object
    assert "the claims' run" in plan and "not in the cache" in plan and " min " in plan
    assert f"*Iterations* {app.SHORT_ITERATIONS}" in plan
    assert app.run_seconds(quick.panda.iterations) > 120  # why the page must say so
    assert app.run_seconds(app.SHORT_ITERATIONS) < app.run_seconds(quick.panda.iterations)
    # the intro states that time, not "a few minutes"
    intro = app.create_app().objects[0].object
    assert "a few minutes" not in intro and app._eta_text(quick.panda.iterations) in intro


def test_run_seconds_is_the_line_through_the_recorded_timings(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("panda_iterations,wall_s\n1000,100\n6000,600\n")
    assert app.run_seconds(3000, path) == pytest.approx(300)
    path.write_text("panda_iterations,wall_s\n1000,100\n")
    assert app.run_seconds(3000, path) is None  # one step count: no line


def test_schedule_is_live_and_analytic():
    e = app.Explorer(rho0=2.0, rho_growth=0.05, iterations=200, anneal=0.5, lr=0.01)
    d = e.plot_data()
    assert d["rho"][0] == 2.0 and d["rho"][-1] == pytest.approx(12.0)
    assert d["lr"][0] == 0.01 and d["lr"][-1] == pytest.approx(1e-4)  # decayed to 1%
    assert "convergence" not in d
    assert e.convergence_chart() is None and "press **Run**" in e.result_note()
    # the live charts sample the exact schedule at its breakpoints (a few points per step)
    rho, steps = e.penalty_chart(), e.step_chart()
    (s,) = rho.series
    assert len(s.x) < 60 and s.y[-1] == pytest.approx(12.0)
    k, lr = steps.series[0].x, steps.series[0].y
    np.testing.assert_allclose(lr, e.schedule(k)["lr"])
    assert lr.min() == pytest.approx(1e-4) and 100.0 in k  # the decay starts at k = 100
    for chart in (rho, steps):
        assert chart.x_label == "iteration k" and chart.y_label not in ("", "y")


def test_live_charts_follow_their_parameters_in_place():
    from icml26.dashboards.app import live

    e = app.Explorer()
    app.pn.Column(e).server_doc(Document())
    (group,) = e._rendered_live
    (penalty, _), (steps, _) = group.figures
    fig = penalty.pane.object
    e.rho0 = 5.0
    assert penalty.pane.object is fig  # updated in place, not redrawn
    assert live.chart_ranges(e.penalty_chart())[1][0] == pytest.approx(5.0)
    assert fig.renderers[0].data_source.data["y"][0] == pytest.approx(5.0)


def test_run_draws_the_figures_then_marks_them_stale(tmp_cache):
    e = app.Explorer(iterations=100, grid=9, methods=["panda", "ignore", "unrolled"],
                     n_states=2, seed=5)
    app.pn.Column(e).server_doc(Document())
    e.param.trigger("run")
    assert e.error_message() == "" and e.run_done == 1
    d = e.plot_data()
    assert d["landscape"].shape == (9, 9) and np.isfinite(d["landscape"]).all()
    assert set(d["paths"]) == {"panda", "ignore", "unrolled"}
    assert {r["method"] for r in d["convergence"]} == {"panda", "ignore", "unrolled"}
    assert all(np.isfinite([r["phi"], r["ratio"]]).all() for r in d["convergence"])
    # the run_done views hold the result: Charts with named axes, the landscape a figure
    conv, ni, rho = e.convergence_chart(), e.ni_chart(), e.rho_chart()
    assert conv.y_log and conv.x_label == "first-order oracle calls"
    assert [s.label for s in conv.series] == ["PANDA", "ignore (ref.)", "unrolled", "Phi*"]
    assert [s.label for s in ni.series] == ["PANDA", "unrolled"]
    assert rho.series[0].y[0] == pytest.approx(e.rho0)
    assert e._landscape.object is not None and e._landscape.object.renderers
    assert "Phi*" in e._summary.object and "stale" not in e.result_note()
    # the Run said it computed (empty cache); now the page says a Run reads the cache
    assert "computed, now cached" in e._stage.object
    assert "is in the cache" in e._plan.object and "not the claims' run" in e._plan.object
    e.param.trigger("run")
    assert e.run_done == 2 and "computed" not in e._stage.object
    e.tau = 0.5  # another game: the figures stay (they show the Run) and say they are stale
    assert "convergence" not in e.plot_data()
    assert "stale" in e._result_caption.object
    assert e.convergence_chart() is not None


def test_a_failed_run_shows_a_message(tmp_cache, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("Newton did not converge")

    monkeypatch.setattr(lib, "experiment", boom)
    e = app.Explorer(iterations=100, grid=9)
    e.param.trigger("run")
    assert "Newton did not converge" in e.error_message()
    assert "convergence" not in e.plot_data() and e.run_done == 0


def test_run_reports_the_libs_stages(tmp_cache, monkeypatch):
    seen = []

    def fake(cfg, seed, progress=None):
        for stage, frac in (("oracle", 0.0), ("panda", 0.3), ("unrolled", 0.7)):
            progress(stage, frac)
            seen.append(e._stage.object)
        raise RuntimeError("stop")

    monkeypatch.setattr(lib, "experiment", fake)
    e = app.Explorer(iterations=300, grid=9)
    e.param.trigger("run")
    assert seen[0].startswith("**Run 1/1:** Phi* on a 9 x 9 grid, PANDA (300 steps)")
    assert "brute-force Phi* over the 9 x 9" in seen[0]
    assert "PANDA, 300 first-order steps" in seen[1] and "(30%)" in seen[1]
    assert "unrolled descent-ascent" in seen[2]


def test_a_slider_step_right_and_back_is_the_default_run():
    """What Chromium sent for the first slider (rho0 = 1, step 0.1) stepped right and back:
    1.1000000000000003, then 1.0000000000000002. Without the base's snapping the Run left
    the claims' cache entry (PANDA retrained in the browser: 165 s instead of 2.6 s)."""
    explorer = app.PandaExplorer()
    default = explorer.config()
    explorer.rho0 = 1.1000000000000003
    explorer.rho0 = 1.0000000000000002
    assert explorer.rho0 == 1.0 and explorer.config() == default
