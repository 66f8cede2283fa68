"""Explorer of ad_auctions without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from icml26.dashboards import ad_auctions as app  # noqa: E402


def test_live_views_follow_kappa_and_name_their_axes():
    e = app.Explorer()
    low = e.plot_data()["z_star"]
    for c in (e.net_chart(), e.spend_view(), e.dual_view()):
        assert c.x_label.lower() not in ("x", "y") and c.y_label.lower() not in ("x", "y")
        assert len(c.title) <= 40
    e.kappa = 0.3  # a dearer LLM: invest less
    assert e.plot_data()["z_star"] < low
    e.n_bidders = 3
    labels = [s.label for s in e.spend_view().series if s.label]
    assert labels == ["bidder 0 (bound)", "bidder 1 (bound)", "bidder 2 (bound)"]


def test_invalid_z_shows_a_message_and_no_chart():
    e = app.Explorer(z_max=2.0, z=3.0)
    assert "z_max" in e.error_message()
    assert e.net_chart() is None and e.plot_data() == {}
    e.z = 1.0
    assert e.error_message() == ""


def test_run_trains_ppo_in_chunks_and_fills_the_result_views():
    e = app.Explorer(ppo_iterations=8)
    assert e.ppo_z_view() is None
    e.param.trigger("run")
    assert e.run_done == 1 and e.error_message() == ""
    z_chart, net_chart = e.ppo_z_view(), e.ppo_net_view()
    (path,) = [s for s in z_chart.series if s.kind == "line"]
    assert len(path.y) == 8
    assert "TTSL-PPO" in e.result_note() and len(e.plot_data()["z_path"]) == 8
    assert net_chart.x_label == "PPO iteration"
