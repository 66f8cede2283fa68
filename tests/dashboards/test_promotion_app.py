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
    assert isinstance(e.ladder_view(), hv.Overlay)


def test_run_solves_the_trajectory_and_phase_diagram():
    e = dash.Explorer(x_grid=101, a_grid=41, phase_cells=4, levels=4)
    assert isinstance(e.trajectory_view(), hv.Text)  # before Run: a message
    e.param.trigger("run")
    d = e.plot_data()
    traj, phase = d["trajectory"], d["phase"]
    assert traj["level"].iloc[-1] == 4 and traj["a_minus"].sum() == 0.0
    assert len(phase) == 4 * 5 and not phase.isna().any().any()
    assert isinstance(e.trajectory_view(), hv.Layout)
    e.gamma = 0.7  # the shown trajectory is now stale, and says so
    assert "stale" in e.trajectory_view().opts.get().kwargs.get("title", "")


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
