"""Explorer of gsrq without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import math

import numpy as np
import pytest

pn = pytest.importorskip("panel")

from icml26 import gsrq  # noqa: E402
from icml26.dashboards import gsrq as app  # noqa: E402
from icml26.dashboards.app import live  # noqa: E402


@pytest.mark.parametrize(("params", "bits"), [
    ({}, 0.25),
    ({"n_codes": 16, "stages": 8, "dim": 32}, 1.0),
    ({"gain_mode": "token", "gain_bits": 4}, 0.25 + 4 / 128),
])
def test_bits_readout(params, bits):
    e = app.Explorer(**params)
    assert e.bits() == pytest.approx(bits)
    chart = e.bits_chart()
    assert f"{bits:.4g} bits per element" in chart.title
    (here,) = [s for s in chart.series if s.kind == "scatter"]
    assert here.y[0] == pytest.approx(bits)


def test_live_charts_name_their_axes_and_follow_the_data():
    """Issue 13/23: the rate plot labelled its axes "x" and "y" (its first layer was an
    HLine) with one tick label on a log axis, and kept its first axes after Stages 4 -> 7;
    the toy's long title was clipped. Now: named axes, a linear rate axis (the rate is
    linear in M), short titles, figures updated in place with ranges that follow the data."""
    from bokeh.document import Document

    e = app.Explorer()
    pn.Column(e).server_doc(Document())
    (group,) = e._rendered_live
    for c in (e.bits_chart(), e.toy_chart()):
        assert c.x_label.lower() not in ("x", "y") and c.y_label.lower() not in ("x", "y")
        assert len(c.title) <= 40 and not c.x_log and not c.y_log
    e.stages = 7
    fig = group.figures[0][0].pane.object
    here = fig.renderers[-1].data_source.data
    assert here["x"][0] == 7 and live.axes_hold_data(fig, e.bits_chart())
    e.param.update(n_codes=16, dim=16)  # 4 bits at M = 16 (was 1): the line moves
    assert max(fig.renderers[0].data_source.data["y"]) == pytest.approx(4.0)
    assert live.axes_hold_data(fig, e.bits_chart())


def test_toy_view_shows_kmeans_shrinkage():
    e = app.Explorer(toy_codes=2)
    d = e.plot_data()
    centroid_norms = np.linalg.norm(d["toy_kmeans"], axis=1)
    assert d["toy_points"].shape == (app.TOY_N, 2)
    assert (centroid_norms < 1.0).all()  # equal-norm points on the unit ring, means inside
    np.testing.assert_allclose(np.linalg.norm(d["toy_gskm_shapes"], axis=1), 1.0, atol=1e-5)
    chart = e.toy_chart()
    # the red centroids are drawn last: on top of everything else
    assert [s.label.split(" ")[0] for s in chart.series[1:]] == ["points", "GSKM", "k-means"]


def test_default_picture_shows_the_shrinkage():
    """Issue 32: at the old default (min(K, 16) = 16 codewords) the picture showed norm
    ratios 0.99 vs 0.99 and the red centroids hid under the blue GSKM codewords (on equal
    norms GSKM's l2-optimal gain makes them coincide). The default K of the picture is 4
    (1 bit per coordinate, app.TOY_CODES_WHY): the centroids sit >= 5% of the radius inside
    the ring (population value 0.907), GSKM's unit shapes on it, drawn apart."""
    e = app.Explorer()
    assert e.toy_codes == 4
    d = e.plot_data()
    km = np.linalg.norm(d["toy_kmeans"], axis=1)
    shapes = np.linalg.norm(d["toy_gskm_shapes"], axis=1)
    assert km.max() <= 0.95 and shapes.min() >= 0.999  # >= 5% of the ring apart
    assert "norm ratio 0.9" in e.toy_chart().title
    old = app._toy(16, 0.0, 0.0, "cos", "cluster", 0)  # the old default: invisible
    assert old["kmeans_metrics"]["norm_ratio"] > 0.98
    assert "inside the ring" in app.LIVE_CAPTION and "K = 4" in app.LIVE_CAPTION


def test_run_quantizes_and_reports_each_stage():
    e = app.Explorer(n_codes=16, stages=2, dim=16, n_samples=1024, norm_tail=0.5)
    assert all(c() is None for c in e.run_charts()) and "press **Run**" in e.result_note()
    e.param.trigger("run")
    assert e.run_done == 1 and "Run done" in e._stage.object
    rows = e.plot_data()["rq"]
    assert [(r["variant"], r["stage"]) for r in rows] == [
        ("RQ-kmeans", 1), ("RQ-kmeans", 2), ("GSRQ", 1), ("GSRQ", 2)]
    assert all(math.isfinite(r["cos"]) and 0 <= r["rel_l2"] <= 1 for r in rows)
    assert rows[1]["bits"] == pytest.approx(gsrq.bits_per_element(16, 2, 16))
    assert e.error_message() == ""
    cos, l2 = (c() for c in e.run_charts())
    assert (cos.y_label, l2.y_label) == ("mean cosine", "relative l2 (squared)")
    assert list(cos.series[2].y) == [r["cos"] for r in rows if r["variant"] == "GSRQ"]
    assert "K = 16, M = 2, d = 16" in e.result_note()


def test_run_figures_draw_when_the_run_ends():
    """Issue 23: the result grid (a HoloViews Layout) drew blank after Run. The two figures
    are Bokeh panes that get their figure when ``run_done`` moves."""
    from bokeh.document import Document

    e = app.Explorer(n_codes=16, stages=2, dim=16, n_samples=1024)
    page = pn.Column(e)
    page.server_doc(Document())
    panes = list(page.select(pn.pane.Bokeh))
    assert len(panes) == 4 and sum(p.object is None for p in panes) == 2
    e.param.trigger("run")
    assert all(p.object is not None for p in panes)
    assert {"Direction kept", "Reconstruction error"} <= {p.object.title.text for p in panes}


def test_notebook_plot_functions_accept_lib_data():
    rows = [{"K": k, "dim": d, "norm_ratio": 0.5, "bits": 0.1, "cos": 0.5}
            for k in (16, 256) for d in (16, 32)]
    app.shrinkage_plot(rows)
    rd = [{"data": "equal-norm", "variant": v, "K": 256, "stage": 1, "bits": 0.0625,
           "cos": 0.6, "rel_l2": 0.5, "norm_ratio": 0.6} for v in gsrq.VARIANTS]
    app.rate_distortion_plot(rd, "cos")
    lm = [{"variant": "fp32 cache", "stages": 0, "bits": 32.0, "ppl": 6.0, "passkey": 1.0}] + [
        {"variant": v, "stages": 1, "bits": 0.25, "ppl": 7.0, "passkey": 0.9}
        for v in gsrq.VARIANTS]
    app.tiny_lm_plot(lm)
    app.benchmark_plot(gsrq.benchmark_data(path="/nonexistent.csv"))


def test_benchmark_plot_reads_the_bench_csv_format():
    import pandas as pd

    rows = [{"timestamp": t, "device": "gpu", "op": op, "impl": impl, "N": n, "K": 16,
             "gbps": 100.0 * n, "bound_gbps": 4000.0}
            for t in ("2026-01-01", "2026-02-01") for op in ("assign", "centroid_sums")
            for impl in ("triton", "torch-eager") for n in (2**14, 2**16)]
    plot = app.benchmark_plot(pd.DataFrame(rows))
    curves = [el for el in plot if el.__class__.__name__ == "Curve"]
    assert len(curves) == 2  # latest run, assign only: one curve per implementation
