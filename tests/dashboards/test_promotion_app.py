"""The promotion Explorer without a browser: live ladder, Run solves, errors show a message."""

from __future__ import annotations

import numpy as np
import pytest

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")

from icml26.dashboards import promotion as dash  # noqa: E402


def test_ladder_follows_the_design():
    e = dash.Explorer()
    steady = e.plot_data()
    np.testing.assert_allclose(steady["thresholds"], steady["steady"])
    np.testing.assert_allclose(steady["settle"], steady["steady"])  # no maintenance needed
    e.param.update(threshold_design="linear slope", slope_multiplier=2.0)
    steep = e.plot_data()
    np.testing.assert_allclose(steep["thresholds"], 2 * steady["thresholds"])
    chart = e.ladder_chart()
    np.testing.assert_allclose(chart.series[0].y, steep["thresholds"])


def test_live_charts_name_their_axes_and_follow_the_data():
    """Issue 23: the ladder kept its first axis ranges after a gamma change; the phase
    diagram's legend covered data. Charts name quantities; the live figure (axes that hold
    the data, legend above the frame) follows the chart's numbers."""
    from bokeh.document import Document

    from icml26.dashboards.app import live

    e = dash.Explorer()
    pn.Column(e).server_doc(Document())
    (group,) = e._rendered_live
    for c in (e.ladder_chart(), e.phase_chart()):
        assert c.x_label not in ("x", "y") and c.y_label not in ("x", "y")
    before = live.chart_ranges(e.ladder_chart())
    e.gamma = 0.95  # thresholds delta l/(1-gamma) grow 4x
    after = live.chart_ranges(e.ladder_chart())
    assert after[1][1] > 3 * before[1][1]
    fig = group.figures[0][0].pane.object
    np.testing.assert_allclose(fig.renderers[0].data_source.data["y"],
                               e.ladder_chart().series[0].y)
    assert live.axes_hold_data(fig, e.ladder_chart())
    # the legend sits above the frame, as HTML: nothing drawn inside it but the grid
    assert group.figures[0][0].legend.object and not fig.center[2:]


def test_run_solves_the_trajectory_and_phase_diagram():
    e = dash.Explorer(x_grid=101, a_grid=41, phase_cells=4, levels=4)
    assert all(c() is None for c in e.run_charts())  # before Run: nothing to draw
    assert "press **Run**" in e.result_note()
    n_phase = len(e.phase_chart().series)
    e.param.trigger("run")
    assert e.run_done == 1 and "Run done" in e._stage.object
    d = e.plot_data()
    traj, phase = d["trajectory"], d["phase"]
    assert traj["level"].iloc[-1] == 4 and traj["a_minus"].sum() == 0.0
    assert len(phase) == 4 * 5 and not phase.isna().any().any()
    charts = [c() for c in e.run_charts()]
    assert [c.y_label for c in charts] == [y for _, _, y in dash.TRAJ_PANELS]
    assert charts[0].series[0].y.max() == 4
    assert len(e.phase_chart().series) == n_phase + 3  # honest / gaming / none cells
    assert "stale" not in e.result_note()
    e.gamma = 0.7  # the shown trajectory is now stale, and says so
    assert "stale" in e.result_note()


def test_run_figures_draw_when_the_run_ends():
    """Issue 23: the 2x2 trajectory Layout drew blank after Run. The four figures are Bokeh
    panes that get their figure when ``run_done`` moves."""
    from bokeh.document import Document

    e = dash.Explorer(x_grid=101, a_grid=41, phase_cells=4, levels=4)
    page = pn.Column(e)
    page.server_doc(Document())
    panes = [p for p in page.select(pn.pane.Bokeh)]
    assert len(panes) == 6 and sum(p.object is None for p in panes) == 4
    e.param.trigger("run")
    assert all(p.object is not None for p in panes)
    titles = {p.object.title.text for p in panes}
    assert {"Level held", "Skill", "Honest effort", "Gaming"} <= titles


def test_settings_the_design_ignores_say_so():
    """Issue 23: custom thresholds (and the slope) used to be ignored silently."""
    e = dash.Explorer()
    assert e.design_note() == ""
    e.custom_thresholds = "1, 2, 3, 4, 5, 6, 7"
    assert "custom thresholds (used only by the design 'custom')" in e.design_note()
    e.threshold_design = "custom"  # now they apply, and the ladder shows them
    assert e.design_note() == ""
    np.testing.assert_allclose(e.plot_data()["thresholds"], np.arange(1.0, 8.0))
    e.slope_multiplier = 2.0
    assert "slope multiplier (used only by the design 'linear slope')" in e.design_note()


def test_pitfall_switch_shows_fake_gaming():
    e = dash.Explorer(x_grid=101, a_grid=41, phase_cells=4, exact_gaps=False)
    e.param.trigger("run")
    assert e.plot_data()["trajectory"]["a_minus"].sum() > 1e-3


@pytest.mark.parametrize("bad", dash.PromotionExplorer.INVALID_EXAMPLES,
                         ids=lambda b: ",".join(b))
def test_invalid_settings_show_a_message_and_run_does_nothing(bad):
    e = dash.Explorer(**bad)
    assert e.error_message()
    e.param.trigger("run")
    assert "trajectory" not in e.plot_data()
