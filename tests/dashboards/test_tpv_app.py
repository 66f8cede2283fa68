"""The tpv Explorer: live charts before Run, a Run in named stages, then live views answer
every slider with finite data."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

pytest.importorskip("panel")

from icml26.dashboards import tpv as app  # noqa: E402
from icml26.dashboards.app import live  # noqa: E402


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))


def finite(data: dict) -> bool:
    arrays = [*data["points"].values(), data["trace_train"], data["trace_test"], data["mc"],
              data["mc_trace"], data["bits_trace"]]
    return all(np.isfinite(np.asarray(a, dtype=float)).all() for a in arrays) and all(
        np.isfinite([r["train"], r["test"], r["ratio"]]).all() for r in data["table"])


def inside(chart: live.Chart) -> None:
    """Every point lies within the data extent the axes follow (and that extent is finite)."""
    (x0, x1), (y0, y1) = live.chart_ranges(chart)
    assert np.isfinite([x0, x1, y0, y1]).all() and x0 <= x1 and y0 <= y1
    if chart.x_log:
        assert x0 > 0
    if chart.y_log:
        assert y0 > 0


@pytest.mark.parametrize("width, depth", [(1, 2), (5, 3), (64, 4)])
def test_backward_pass_equals_the_lib_jacobian_norms(width, depth):
    g = torch.Generator().manual_seed(3)
    model = app.tpv.MLP.build(20, width, depth, generator=g)
    x = torch.randn(64, 20, generator=g)
    np.testing.assert_allclose(app.sq_jacobian_norms(model, x).numpy(),
                               app.tpv.layer_factors(model, x).sq_norms().numpy(),
                               rtol=1e-5, atol=1e-7)


def test_before_run_the_views_show_the_untrained_student():
    e = app.Explorer(width=3, n_train=20, seed=9999)
    d = e.plot_data()
    assert not d["trained"] and d["table"] == [] and finite(d)
    chart = e.tpv_view()
    assert "Untrained" in chart.title and chart.x_log and chart.y_log
    inside(chart), inside(e.bits_view())
    assert "press **Run" in e.result_note()
    e.width = 4  # the first slider moves the plotted numbers (the browser test relies on it)
    assert not np.array_equal(e.plot_data()["points"]["quant"], d["points"]["quant"])


def test_axes_name_their_quantity_and_legends_sit_outside():
    e = app.Explorer(width=3, n_train=20)
    for chart in (e.tpv_view(), e.bits_view()):
        for label in (chart.x_label, chart.y_label):
            assert label.strip().lower() not in ("", "x", "y")
        assert len(chart.title) <= 48, chart.title
        fig = live.figure(chart)
        legends = [m for m in [*fig.center, *fig.above] if type(m).__name__ == "Legend"]
        assert legends and all(m in fig.above for m in legends), "legend above the frame"


def test_run_in_named_stages_then_sliders(tmp_cache):
    e = app.Explorer(width=4, depth=3, n_train=40, teacher="relu", seed=3)
    shown: list[str] = []
    e._stage.param.watch(lambda ev: shown.append(ev.new), "object")
    done = e.run_done
    e.param.trigger("run")
    assert e.error_message() == "" and e.run_done == done + 1
    stages = [s for s in shown if s.startswith("**Run")]
    # a stage's line is shown again when the cache says whether it reads or trains: in order
    stages = [s for i, s in enumerate(stages)
              if i + 1 == len(stages) or stages[i + 1][:12] != s[:12]]
    assert [s[:12] for s in stages] == ["**Run 1/3:**", "**Run 2/3:**", "**Run 3/3:**"]
    assert "training the student" in stages[0] and "estimating" in stages[1]
    assert "Monte Carlo" in stages[2] and shown[-1].startswith("Run done")
    d = e.plot_data()
    assert d["trained"] and "Train vs test" in e.tpv_view().title
    assert {r["perturbation"] for r in d["table"]} == set(app.LABELS.values())
    assert "| pruning (JBR) |" in e.result_note()
    assert d["points"]["prune"].shape == (8, 2)  # one point per hidden neuron (2 x 4)
    assert finite(d)
    # trace form and Monte Carlo of the run agree at 8 bits and fall ~4x per bit
    mc = dict(zip(d["mc_bits"], d["mc"]))
    tr = dict(zip(d["mc_bits"], d["mc_trace"]))
    assert abs(tr[8.0] / mc[8.0] - 1) < 0.5  # 64 draws only
    assert 3.0 < tr[8.0] / tr[9.0] < 4.5
    # the drawn trace line over every bit passes through the Run's trace at its bits
    np.testing.assert_allclose(d["bits_trace"][np.isin(d["bits"], d["mc_bits"])],
                               d["mc_trace"], rtol=1e-6)
    rng = random.Random(0)
    before = d["points"]["quant"].copy()
    for _ in range(30):
        e.param.update(perturbation=rng.choice(list(app.tpv.PERTURBATIONS)),
                       bits=rng.randint(1, 16), label_sigma=rng.uniform(0.001, 0.1),
                       label_lambda=rng.uniform(0.001, 10.0), sgd_lr=rng.uniform(1e-4, 0.1),
                       sgd_batch=rng.randint(1, 1000))
        inside(e.tpv_view()), inside(e.bits_view()), e.result_note()
        assert finite(e.plot_data())
    e.bits = 10
    after = e.plot_data()["points"]["quant"]
    e.bits = 8
    np.testing.assert_allclose(e.plot_data()["points"]["quant"], before)
    assert (after < before).all()
    # a second Run of the same student answers at once (one stage, no recomputation)
    shown.clear()
    e.param.trigger("run")
    assert sum(s.startswith("**Run") for s in shown) == 1 and e.run_done == done + 2
    e.width = 5  # another student: back to the untrained view until Run
    assert not e.plot_data()["trained"]


def test_the_axes_follow_the_data_after_run(tmp_cache):
    """Issue 23: the live trace-form plot kept its pre-Run axis ranges after training. The
    drawn figure's sources hold the trained numbers and its axes hold them."""
    import panel as pn
    from bokeh.document import Document

    from icml26.dashboards.app import live

    e = app.Explorer(width=4, depth=2, n_train=30, teacher="linear", seed=5)
    pn.Column(e).server_doc(Document())
    (group,) = e._rendered_live
    e.param.trigger("run")
    for (figure, _), chart_fn in zip(group.figures, e.live_charts()):
        fig, chart = figure.pane.object, chart_fn()
        assert live.axes_hold_data(fig, chart)
        drawn = [np.asarray(r.data_source.data["y"], float) for r in fig.renderers]
        for got, s in zip(drawn, [s for s in chart.series if s.kind != "vline"]):
            np.testing.assert_array_equal(got, s.y)
    assert "Train vs test" in group.figures[0][0].pane.object.title.text
