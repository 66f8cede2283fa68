"""Explorer of coval without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from icml26.dashboards import coval as app  # noqa: E402


def test_live_scan_shows_the_shadow_and_exact_counterfactual():
    e = app.Explorer()
    top, profile = e.top_chart(), e.profile_chart()
    labels = [s.label for s in top.series]
    assert "anomaly" in labels and "reappears in cf" in labels
    assert profile.x_label == "beam bearing (deg)" and profile.y_label == "range (m)"
    assert "outside the shadow = 0 m" in profile.title
    reappear = top.series[2]
    assert len(reappear.x) > 0  # the background behind the anomaly comes back


def test_sensor_offset_breaks_the_counterfactual_in_the_view():
    e = app.Explorer(jitter=0.1)
    assert "outside the shadow = 0 m" not in e.profile_chart().title


def test_zero_loss_weights_show_a_message():
    e = app.Explorer(w_vvcr=0.0, w_vicc=0.0)
    assert "loss weights are 0" in e.error_message()
    e.w_vicc = 0.5
    assert e.error_message() == ""


def test_run_trains_and_draws_ap_by_size(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    e = app.Explorer(steps=20, n_train=64, n_beams=64)
    e.param.trigger("run")
    assert e.run_done == 1, e.error_message()
    chart = e.size_chart()
    assert chart.x_label == "anomaly radius (m)" and chart.y_label == "point AP"
    assert "seg-only" in e.result_note() and "COVAL" in e.result_note()
