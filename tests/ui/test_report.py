"""The static report (``icml26 report``) from ``file://`` in Chromium, with no network: the
index lists every paper, and every page of a built paper draws every plot, with no console
error and no request leaving the file system. The test command builds the report after the
other tests (warm cache) and points ``ICML26_REPORT`` at it; a report built for some papers
(``icml26 report --papers ...``) is checked for those (its ``report.json`` says which)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from browser import figure_problems

from icml26 import papers
from icml26.dashboards.app.report import MANIFEST

pytestmark = pytest.mark.ui

SITE = os.environ.get("ICML26_REPORT", "")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="module")
def site() -> Path:
    if not SITE or not (Path(SITE) / "index.html").exists():
        if IN_CI:
            pytest.fail("ICML26_REPORT must point at a built report (tests/run.sh builds it)")
        pytest.skip("no report: icml26 report --out site, then ICML26_REPORT=site pytest ...")
    return Path(SITE).resolve()


def _page(site: Path, slug: str) -> Path:
    """``slug``'s page; skips a paper the report was not asked to build."""
    manifest = site / MANIFEST
    record = json.loads(manifest.read_text()) if manifest.exists() else {"complete": True}
    if not record["complete"] and slug not in record["papers"]:
        pytest.skip(f"{slug} is not in this report (built with --papers)")
    return site / f"{slug}.html"


def test_index_lists_every_paper(site, offline):
    page, blocked, page_errors, console_errors = offline
    errors = page_errors + console_errors
    page.goto((site / "index.html").as_uri())
    page.screenshot(path=str(site / "index.png"), full_page=True)
    text = page.inner_text("body")
    for p in papers.PAPERS:
        assert p.slug in text, p.slug
    assert "notebook failed" not in text
    assert not blocked and not errors, (blocked, errors)


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_every_plot_of_a_paper_page_draws_offline(site, offline, slug):
    page, blocked, page_errors, console_errors = offline
    errors = page_errors + console_errors
    page.goto(_page(site, slug).as_uri())
    page.wait_for_function("() => window.Bokeh && [...Bokeh.index.all_views()].length > 0",
                           timeout=60_000)
    time.sleep(1.0)  # let every embedded document render
    problems = figure_problems(page, slug)
    assert not problems, "\n".join(problems)
    assert not blocked, f"requests left the file system: {blocked[:5]}"
    assert not errors, errors


#: what a reader must not see on a paper page: a warning or an error (stderr), a raw numpy
#: scalar or dataclass repr, a link to Panel's CDN, a tqdm bar's text fallback (its first state)
NOT_ON_A_PAGE = {"stderr output": 'data-mime-type="application/vnd.jupyter.stderr"',
                 "numpy scalar repr": "np.float64(", "dataclass repr": "Config(",
                 "Panel CDN link": "cdn.holoviz.org", "frozen tqdm bar": "0%|"}


@pytest.mark.parametrize("slug", [p.slug for p in papers.built()])
def test_a_paper_page_shows_no_warning_or_raw_repr(site, slug):
    text = _page(site, slug).read_text()
    found = {what: text[max(0, text.find(s) - 200):text.find(s) + 200]
             for what, s in NOT_ON_A_PAGE.items() if s in text}
    assert not found, found
