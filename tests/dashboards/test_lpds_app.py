"""Explorer of lpds without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from icml26 import lpds  # noqa: E402
from icml26.dashboards import lpds as app  # noqa: E402


def test_off_support_share_grows_with_delta_and_matches_sampling():
    e = app.Explorer(delta=0.5)
    small = e.plot_data()["share"]
    e.delta = 6.0
    big = e.plot_data()["share"]
    assert 0.01 < small < big
    import torch

    g = torch.Generator().manual_seed(0)
    w = torch.randn(40000, 16, generator=g)
    w[:, 0] += 6.0 ** 0.5  # ||Delta||^2 = 6
    mc = float(((w ** 2).sum(1) > lpds.chi2_quantile(16)).float().mean())
    assert big == pytest.approx(mc, abs=0.01)


def test_live_charts_follow_the_settings():
    e = app.Explorer()
    assert "30% noisy" in e.map_chart().title
    e.noisy_share = 0.5
    assert "50% noisy" in e.map_chart().title
    e.delta = 2.0
    assert "delta = 2" in e.latent_law_chart().title
    (chosen,) = [s for s in e.share_chart().series if s.kind == "scatter"]
    assert chosen.x[0] == 2.0


def test_warmup_beyond_iterations_shows_a_message():
    e = app.Explorer(iterations=10, warmup=20)
    assert "warmup" in e.error_message()
    e.warmup = 5
    assert e.error_message() == ""


def test_the_defaults_are_the_quick_scale():
    """A Run at default settings reuses the claims' cached prior and runs."""
    cfg = app.Explorer().config()
    quick = lpds.config_for("quick")
    assert cfg.map == quick.map and cfg.prior == quick.prior and cfg.steer == quick.steer


def test_run_fills_the_result_views(monkeypatch):
    small = lpds.PriorConfig(hidden=32, steps=40, batch=64, n_demos=256)
    monkeypatch.setitem(lpds.SCALES, "quick",
                        lpds.LPDSConfig(prior=small,
                                        steer=lpds.SteerConfig(n_envs=32, critic_steps=2,
                                                               actor_steps=2, batch=64,
                                                               entropy_samples=32)))
    e = app.Explorer(iterations=10, warmup=2, delta=1.0)
    assert e.run_returns_chart() is None
    e.param.trigger("run")
    assert e.run_done == 1 and e.error_message() == ""
    assert set(e.plot_data()["final_returns"]) == {"BC", "LP-DS d=1", "DSRL", "residual RL"}
    for chart in (e.run_returns_chart(), e.run_entropy_chart(), e.run_dual_chart(),
                  e.run_paths_chart()):
        assert chart is not None and chart.x_label and chart.y_label


def test_fixed_comparison_charts_mark_the_validation_best_and_the_widest_bound():
    cfg = lpds.LPDSConfig()
    exp = {"BC": {"final_return": 0.3, "final_entropy": -35.0}}
    for i, k in enumerate(lpds.method_configs(cfg)):
        exp[k] = {"final_return": 0.1 * i, "val_return": -i if "d=2" not in k else 9.0,
                  "final_entropy": float(i)}
    tune = app.tuning_chart(exp, cfg)
    (best,) = [s for s in tune.series if s.label == "validation-best setting"]
    lp_best = exp["LP-DS d=2"]["final_return"]
    assert best.y[0] == pytest.approx(lp_best)  # LP-DS read at its validation-best delta
    ent = app.entropy_contrast_chart(exp, cfg)
    (mark,) = [s for s in ent.series if s.kind == "vline"]
    assert mark.at == max(cfg.dsrl_bounds)
    assert any(s.kind == "hline" and s.at == exp["LP-DS d=2"]["final_entropy"]
               for s in ent.series)
