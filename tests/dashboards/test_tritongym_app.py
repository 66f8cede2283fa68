"""Explorer of tritongym without a browser: set params, inspect the data behind the views."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from icml26 import tritongym as tg  # noqa: E402
from icml26.dashboards import tritongym as app  # noqa: E402


def test_live_charts_are_the_closed_form():
    e = app.Explorer(p_bug=0.4, p_fix=0.6, suspects=3, turns=5)
    budget, p_bug = (c() for c in e.live_charts())
    (it,) = [s for s in budget.series if s.label == "iterative"]
    assert it.y[3] == pytest.approx(tg.closed_form_pass("iterative", 0.4, 0.6, 4, 3))
    (bo,) = [s for s in p_bug.series if s.label == "best-of-N"]
    assert bo.y[-1] == pytest.approx(0.0) and bo.y[0] == pytest.approx(1.0)
    for c in (budget, p_bug):
        assert c.x_label.lower() not in ("x", "y") and c.y_label == "Pass@1"


def test_run_verifies_and_simulates():
    e = app.Explorer(episodes=100)
    assert all(c() is None for c in e.run_charts()) and "press **Run**" in e.result_note()
    e.param.trigger("run")
    assert e.run_done == 1 and "Run done" in e._stage.object and e.error_message() == ""
    mc_p, mc_b, err = (c() for c in e.run_charts())
    assert len(mc_p.series) == 8 and err.y_log
    assert "33 of 33 mutants fail verify" in e.result_note()


def test_dropping_the_odd_tail_lets_mutants_escape():
    e = app.Explorer(episodes=50, shape_kinds=["regular", "stress"])
    e.param.trigger("run")
    assert "17 of 33 mutants fail verify" in e.result_note()


def test_bad_settings_show_a_message():
    e = app.Explorer()
    e.operators = []
    assert "operator" in e.error_message()
    e.param.trigger("run")
    assert e.run_done == 0
    e.operators = ["add"]
    assert e.error_message() == ""
