"""spurious_dpo Explorer without a browser: live theory, invalid settings, the Run button."""

from __future__ import annotations

import numpy as np
import pytest

from icml26 import spurious_dpo as sd

pn = pytest.importorskip("panel")
hv = pytest.importorskip("holoviews")
dash = pytest.importorskip("icml26.dashboards.spurious_dpo")
Chart = pytest.importorskip("icml26.dashboards.app").Chart


def finite(data: dict) -> bool:
    for v in data.values():
        arr = v.select_dtypes("number").to_numpy() if hasattr(v, "select_dtypes") else v
        if not np.isfinite(np.asarray(arr, dtype=float)).all():
            return False
    return True


def test_config_maps_the_widgets_to_the_library():
    e = dash.Explorer(m=0.8, log10_n_pairs=3.0, tie_fraction=0.25, seeds=4, training="l2")
    cfg = e.config()
    assert (cfg.m, cfg.n_pairs, cfg.tie_replicates) == (0.8, 1000, 4)
    assert 0.25 in cfg.tie_fractions and max(cfg.n_grid) == 1000


@pytest.mark.parametrize("training", sd.TRAININGS)
def test_live_views_follow_the_regime(training):
    e = dash.Explorer(training=training)
    d = e.plot_data()
    assert finite(d) and e.error_message() == ""
    # the mean-bias line is the closed form, whatever the regime
    np.testing.assert_allclose(d["theta_s1_theory"], 2 * d["m"] / (e.beta * e.sigma_eps**2))
    # ties never lower the causal weight relative to L2 at the same spurious weight
    assert (d["ties_causal"] >= d["l2_causal"] - 1e-9).all()
    for view in (e.mean_bias_view, e.leakage_view, e.deployment_view, e.ties_view):
        assert isinstance(view(), Chart)


@pytest.mark.parametrize("recorded", [False, True])
def test_moving_m_moves_the_theory_and_not_the_run_views(recorded):
    e = dash.Explorer(recorded=recorded)
    data = e.plot_data()
    before, runs = data["acc_dpo"].copy(), {k: v for k, v in data.items() if k.startswith("run_")}
    e.m = 1.2
    after = e.plot_data()
    assert not np.allclose(before, after["acc_dpo"])
    # nothing heavy runs until Run is pressed (the recorded default Run's views stay)
    assert ("run_ties" in after) == recorded
    assert repr({k: v for k, v in after.items() if k.startswith("run_")}) == repr(runs)


def test_an_unstable_step_size_shows_a_message_not_a_traceback():
    e = dash.Explorer(**dash.Explorer.INVALID_EXAMPLES[0])
    assert "too large" in e.error_message()
    assert all(len(v) == 0 for v in e.plot_data().values())
    for view in (e.mean_bias_view, e.leakage_view, e.deployment_view, e.ties_view):
        assert view() is None  # the live figure keeps its last valid state


def test_run_fits_at_small_n_and_fills_the_heavy_views():
    e = dash.Explorer(log10_n_pairs=2.5, seeds=1, tie_fraction=0.2)
    e.param.trigger("run")
    d = e.plot_data()
    assert {"run_leakage", "run_irreducible", "run_ties", "run_mean_bias"} <= set(d)
    assert finite(d)
    assert set(d["run_ties"].tie_fraction) == {0.0, 0.1, 0.2, 0.3, 0.5}
    assert isinstance(e.run_leakage_view(), hv.core.Dimensioned)
    for view, n_panels in ((e.run_irreducible_view, 3), (e.run_ties_view, 4)):
        grid = view()  # the grid's panels as separate panes (see dashboards' _panels)
        assert len(grid) == n_panels
        assert all(isinstance(pane.object, hv.core.Dimensioned) for pane in grid)


def test_run_reports_each_stage_and_hides_the_progress_after(monkeypatch):
    seen = []
    real = dash._run_stage.__wrapped__

    def spy(stage, cfg, seed):
        seen.append((stage, e._progress.value, e._stage.object, e._progress.visible))
        return real(stage, cfg, seed)

    monkeypatch.setattr(dash, "_run_stage", spy)
    e = dash.Explorer(log10_n_pairs=2.0, seeds=1)
    e.param.trigger("run")
    assert [s[0] for s in seen] == [s for s, _ in dash.RUN_STAGES]
    assert [s[1] for s in seen] == [0, 33, 66] and all(s[3] for s in seen)
    assert all(f"Run {i + 1}/3" in s[2] for i, s in enumerate(seen))
    assert not e._progress.visible and e.error_message() == ""
    assert e._stage.object.startswith("Run done") and e.run_done == 1


def test_a_failed_run_shows_a_message_and_keeps_the_server_alive(monkeypatch):
    def fail(stage, cfg, seed):
        raise RuntimeError("Newton did not converge")

    monkeypatch.setattr(dash, "_run_stage", fail)
    e = dash.Explorer(log10_n_pairs=2.0, seeds=1)
    e.param.trigger("run")
    assert "Run failed: RuntimeError: Newton did not converge" in e.error_message()
    assert e.run_done == 0
    assert not e._progress.visible and "run_ties" not in e.plot_data()
