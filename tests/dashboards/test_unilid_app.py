"""Explorer of unilid without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from icml26 import unilid  # noqa: E402
from icml26.dashboards import unilid as app  # noqa: E402


def test_prior_chart_follows_k_and_alpha():
    e = app.Explorer()
    chart = e.prior_chart()
    assert chart.x_label.startswith("labelled samples") and "alpha" in chart.y_label
    (here,) = [s for s in chart.series if s.kind == "scatter"]
    n = 5 * app.PIECES_PER_SAMPLE
    assert here.y[0] == pytest.approx(n / (n + 20.0))
    e.param.update(k=1, alpha=200.0)
    (here,) = [s for s in e.prior_chart().series if s.kind == "scatter"]
    assert here.x[0] == 1 and here.y[0] == pytest.approx(57 / 257)


def test_config_maps_the_params():
    e = app.Explorer(k=7, language_set="distinct10", max_len=1, em_iters=2, score="viterbi")
    cfg = e.config()
    assert cfg.languages == unilid.DISTINCT10 and cfg.k_grid == (1, 2, 5, 7)
    assert cfg.claim_k == 7 and cfg.model.max_len == 1 and cfg.model.score == "viterbi"
    assert cfg.added in cfg.languages


def test_views_before_run_are_empty_and_the_note_says_press_run():
    e = app.Explorer(recorded=False)  # as before any Run
    assert e.accuracy_chart() is None and e.per_language_chart() is None
    assert "press **Run**" in e.result_note()


def test_panel_renders_without_running():
    from bokeh.document import Document

    e = app.Explorer()
    pn.Column(e).server_doc(Document())
    assert len(e._rendered_live) == 1
