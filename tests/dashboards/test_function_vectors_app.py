"""The function-vectors Explorer: its blocked status on the page (checked against the seeds'
evidence), the shift distribution as a live Chart, the model Run through run_stages."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("panel")

from bokeh.document import Document  # noqa: E402

from icml26 import papers  # noqa: E402
from icml26.dashboards import function_vectors as app  # noqa: E402

SEEDS_CSV = Path(__file__).resolve().parents[2] / "benchmarks" / "function_vectors_seeds.csv"


def failing_binding_claims() -> dict[int, set[str]]:
    """Per seed, the binding claims (expected=True) that fail with a measured number (the
    gated ones, not measured, are NaN and covered by the note's 'not measured')."""
    out: dict[int, set[str]] = {}
    with SEEDS_CSV.open() as f:
        for row in csv.DictReader(f):
            if row["expected"] == "True" and row["holds"] == "False" and row["measured"] != "nan":
                out.setdefault(int(row["seed"]), set()).add(row["claim"])
    return out


def test_status_note_names_the_failing_binding_claims():
    assert papers.get("function_vectors").status == "blocked"
    failing = failing_binding_claims()
    assert {s: set(c) for s, c in app.BLOCKED_SEEDS.items()} == failing
    for claim in set().union(*failing.values()):
        assert f"`{claim}`" in app.STATUS_NOTE
    for seed in failing:
        assert f"**{seed}**" in app.STATUS_NOTE
    e = app.Explorer()
    assert e._status.visible and e._status.object == app.STATUS_NOTE


def test_views_draw_and_the_shift_chart_is_live():
    e = app.Explorer()
    pn = app.pn
    pn.Column(e).server_doc(Document())
    (group,) = e._rendered_live
    ((shift, _),) = group.figures
    fig = shift.pane.object
    chart = e.shift_chart()
    assert chart.x_label.startswith("shift j") and chart.y_label.startswith("p(answer")
    e.task = 5
    assert shift.pane.object is fig  # in place
    assert [m.location for m in fig.center if type(m).__name__ == "Span"] == [5.0]
    for view in (e.accuracy_view, e.decomposition_view, e.attention_view, e.aie_view):
        el = view()
        assert el is not None
    e.show_attention = True
    assert type(e.attention_view()).__name__ == "HeatMap"


def test_run_loads_a_seed_through_run_stages():
    e = app.Explorer(model_seed=2)
    assert "press Run" in e.error_message()
    e.param.trigger("run")
    assert e.run_done == 1 and e._loaded_seed == 2
    assert e.error_message() == ""
    assert "Run done" in e._stage.object
