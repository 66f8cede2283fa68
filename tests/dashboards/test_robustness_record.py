"""The robustness page before any Run: the committed hold-rate record, not an empty frame;
the Wilson intervals drawn on top of the bars (issue 32)."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from icml26 import status  # noqa: E402
from icml26.dashboards.app.sweep_page import RobustnessExplorer  # noqa: E402


def test_the_page_opens_on_the_committed_record():
    rates = status.read_rates()
    expect = {(s, r.name): (r.rate.held, r.rate.seeds) for s in ("recruitment",)
              for r in status.records(s, rates) if r.rate is not None}
    assert expect, "the committed record has recruitment's rates"
    page = RobustnessExplorer()
    assert page.hold_rates() == expect
    assert len(page.source.data["label"]) == len(expect) == len(page.figure.y_range.factors)
    assert "Showing the committed record" in page.status and "Press **Run**" in page.status
    page.papers = ["recruitment", "panda"]  # the record follows the chosen papers
    assert {p for p, _ in page.hold_rates()} == {"recruitment", "panda"}


def test_a_paper_without_a_current_record_is_said_so(tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_HOLD_RATES", str(tmp_path / "none.csv"))
    page = RobustnessExplorer(papers=["recruitment"])
    assert page.hold_rates() == {}
    assert "No current committed record for recruitment" in page.status


def test_the_wilson_intervals_are_drawn_over_the_bars():
    """A Whisker defaults to the "underlay" level: an 8/8 bar (interval 0.68-1) hid it."""
    page = RobustnessExplorer()
    (whisker,) = [m for m in page.figure.center if type(m).__name__ == "Whisker"]
    assert whisker.level == "overlay" and whisker.line_width >= 2
    (bars,) = [r for r in page.figure.renderers if type(r.glyph).__name__ == "HBar"]
    assert bars.glyph.fill_alpha < 1  # the interval shows through the bar as well
