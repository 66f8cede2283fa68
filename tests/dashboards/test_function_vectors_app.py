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

SEEDS_CSV = (Path(__file__).resolve().parents[2] / "benchmarks" / "function_vectors"
             / "function_vectors_seeds.csv")


def test_status_note_says_the_status_and_names_each_failing_binding_claim(tmp_path):
    assert app.SEEDS_CSV == SEEDS_CSV
    status = papers.get("function_vectors").status
    failing, seeds = {}, set()
    with SEEDS_CSV.open() as f:
        for row in csv.DictReader(f):
            seeds.add(int(row["seed"]))
            if row["expected"] == "True" and row["holds"] == "False":
                failing.setdefault(row["claim"], []).append(int(row["seed"]))
    note = app.status_note()
    assert f"Status: {status}." in note
    for claim, bad in failing.items():
        bad = sorted(bad)
        assert (f"`{claim}` ({len(bad)} of {len(seeds)}): seeds {', '.join(map(str, bad))}"
                in note), claim
    e = app.Explorer()
    assert e._status.object == note and e._status.visible == (status != "reproduced")
    # the note follows the record: one failing row makes it name that seed and claim
    rows = SEEDS_CSV.read_text().splitlines()
    head = rows[0].split(",")
    fake = dict.fromkeys(head, "")
    fake.update(seed="42", claim="cie_top_effect", holds="False", expected="True")
    path = tmp_path / "seeds.csv"
    path.write_text("\n".join([rows[0], ",".join(fake[k] for k in head)]) + "\n")
    assert "`cie_top_effect` (1 of 1): seeds 42" in app.status_note(path)
    path.write_text(rows[0] + "\n")
    assert "holds on every recorded seed" in app.status_note(path)


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


def test_a_run_at_the_defaults_shows_something_new():
    """Issue 32: the default Run loaded seed 0, already shown, and changed nothing visible.
    Now it also computes the paper's F1 for the seed (the claims' intervention numbers): a
    figure and a caption that were not there before the Run."""
    e = app.Explorer(recorded=False)  # as before any Run
    before = (e.result_note(), type(e.interventions_view()).__name__)
    assert before[1] == "Text" and "Press Run" in e.interventions_view().data[2]
    e.param.trigger("run")
    assert e.run_done == 1 and e.error_message() == ""
    bars = e.interventions_view()
    assert type(bars).__name__ == "Bars" and len(bars.data) > 10
    assert e.result_note() != before[0] and "Run result, model seed 0" in e._result_caption.object
    assert "replace top-3" in set(bars.data["intervention"])


def test_run_loads_a_seed_through_run_stages():
    e = app.Explorer(model_seed=2)
    assert "press Run" in e.error_message()
    e.param.trigger("run")
    assert e.run_done == 1 and e._loaded_seed == 2
    assert e.error_message() == ""
    assert "Run done" in e._stage.object
