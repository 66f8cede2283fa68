"""Served apps in Chromium: the index lists every paper; each app's plot follows its slider."""

from __future__ import annotations

import pytest
from browser import fingerprint, open_app, slider_latency

from icml26 import papers

pytestmark = pytest.mark.ui

REPRODUCED = [p.slug for p in papers.built()]  # every built paper, blocked ones too


def test_index_lists_every_paper(page, app_server):
    page.goto(app_server + "/", timeout=90_000)
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0",
                           timeout=90_000)
    page.get_by_text("evoclaw").first.wait_for(timeout=60_000)
    for p in papers.PAPERS:  # Panel renders into shadow roots: locators pierce them
        assert page.get_by_text(p.slug, exact=True).count() >= 1, p.slug
    for slug in REPRODUCED:
        assert page.locator(f"a[href='./{slug}']").count() >= 1


@pytest.mark.parametrize("slug", ["trivial", *REPRODUCED])
def test_plot_changes_when_a_slider_moves(page, app_server, slug):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_app(page, f"{app_server}/{slug}")
    before = fingerprint(page)
    assert before is not None
    (latency,) = slider_latency(page, presses=1)
    assert fingerprint(page) != before
    assert not errors, errors
