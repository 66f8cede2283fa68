"""The status line on top of every paper's app: the computed status (``icml26.status``) and its
headline claims' estimates over the committed seeds, computed at page build, no claim run."""

from __future__ import annotations

import pytest

pytest.importorskip("panel")

from icml26 import papers, status, status_table  # noqa: E402
from icml26.dashboards.app import page  # noqa: E402


@pytest.mark.parametrize("slug", ["recruitment", "evoclaw"])
def test_the_line_is_the_computed_status_and_the_headline_estimates(slug):
    paper = papers.get(slug)
    st = status.status(slug, paper.harness)
    line = page.status_line(slug)
    assert line.startswith(f"Status: {st.label}. ") or line.startswith(f"Status: {st.label} (")
    assert line.split(". Headline")[0].removeprefix("Status: ").split(" (")[0] == st.word
    for h in st.headlines:
        assert status_table.headline_text(h) in line
    assert "\n" not in line  # one line
    explorer = paper.dashboard().Explorer()
    assert explorer.status_line() == line
    intro = paper.dashboard().create_app().objects[0].object  # the page's first pane
    assert intro.startswith(f"**Status:** {page._markdown_text(line[len('Status: '):])}\n\n")


def test_a_blocked_or_pending_paper_gives_its_reason(monkeypatch):
    rec = status.ClaimRecord("x_y", "headline", "each", True, "s", None)
    fake = status.Status("recruitment", "blocked", False, "not holding: check a_b (1 < 2)",
                         (rec,))
    monkeypatch.setattr(papers.Paper, "status_info", lambda self: fake)
    line = page.status_line("recruitment")
    assert line == ("Status: blocked (not holding: check a_b (1 < 2)). Headline claims over the "
                    "committed seeds: x_y: no values of its current row.")
    # shown as written: Markdown's markup characters escaped
    assert page._markdown_text(line) == line.replace("_", r"\_").replace("<", r"\<")


def test_an_explorer_of_no_paper_has_no_line():
    class Bare(page.ExplorerBase):
        pass

    assert Bare().status_line() == ""
