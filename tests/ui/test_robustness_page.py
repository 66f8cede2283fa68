"""The robustness page in Chromium: it loads offline; Run grows the hold-rate bars live (the
progress bar passes through intermediate values and the plotted data changes several times
before the end); Stop cancels the remaining tasks.

The page runs the real ``recruitment`` claims (a few seconds per seed) on a LocalCluster of two
worker processes started by the test server; "recompute" is ticked so that the seeds are run
even when an earlier test run left them in the dataset.
"""

from __future__ import annotations

import re
import time

import pytest
from browser import fingerprint
from playwright.sync_api import TimeoutError as PlaywrightTimeout

pytestmark = pytest.mark.ui

TIMEOUT_S = 420  # cluster start + the real tasks, on a busy 2-core machine


def open_page(page, url: str) -> None:
    page.goto(url + "/robustness", timeout=90_000)
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0",
                           timeout=90_000)
    page.locator("canvas").first.wait_for(state="visible", timeout=90_000)
    page.get_by_role("button", name="Run", exact=True).wait_for(timeout=60_000)


#: the rows of the hold-rate bars' data source in the page (0: an empty frame)
BARS_JS = """() => {
  for (const m of window.Bokeh.documents[0].all_models) {
    if ((m.type || m.constructor.name) === 'ColumnDataSource') {
      const d = m.data, rate = d instanceof Map ? d.get('rate') : d['rate'];
      if (rate !== undefined) return rate.length;
    }
  }
  return -1;
}"""


def bar_count(page) -> int:
    return page.evaluate(BARS_JS)


def progress(page) -> tuple[int, int]:
    bar = page.locator("progress").first
    return int(float(bar.get_attribute("value") or 0)), int(float(bar.get_attribute("max")))


def status(page) -> str:
    """The run's status line, for failure messages."""
    line = page.get_by_text(re.compile(r"Press|Starting|Running|done|Stopp|Done|failed"))
    return line.first.inner_text() if line.count() else "(no status line)"


def start_run(page, fewer: int = 0) -> None:
    """Tick "recompute", take ``fewer`` seeds off the default 8 (the "N seeds" slider, the
    first on the page) and press Run, once the page confirms the settings: the server
    handles a widget change and a button press on two threads in no set order, so a Run
    pressed at once may read the settings from before the change."""
    handle = page.locator(".noUi-handle").first
    for _ in range(fewer):
        handle.press("ArrowLeft")
    page.get_by_role("checkbox").first.check()  # the only one: recompute
    last = 7 - fewer
    try:
        page.get_by_text(f"on seeds 0-{last} ({last + 1} tasks; seeds already in the dataset "
                         "are run again)").first.wait_for(timeout=30_000)
    except PlaywrightTimeout:
        pytest.fail(f"the page never confirmed seeds 0-{last} with recompute; "
                    f"status: {status(page)!r}")
    page.get_by_role("button", name="Run", exact=True).click()


def test_page_loads_offline(offline, app_server):
    page, blocked, page_errors, console_errors = offline
    open_page(page, app_server)
    page.get_by_text("Claim robustness over seeds").first.wait_for(timeout=30_000)
    # before any Run: the committed hold-rate record, bars and intervals, not an empty frame
    page.get_by_text("Showing the committed record").first.wait_for(timeout=30_000)
    assert bar_count(page) > 0, "the figure is an empty frame before Run"
    assert blocked == [] and page_errors == [], (blocked, page_errors)


def test_index_links_to_the_robustness_page(page, app_server):
    page.goto(app_server + "/", timeout=90_000)
    page.locator("a[href='./robustness']").first.wait_for(timeout=60_000)


def test_run_grows_the_bars_live_and_links_dask(page, app_server):
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    open_page(page, app_server)
    start_run(page, fewer=5)  # 3 seeds on 2 workers: the third runs after
    states, values = [], set()
    deadline = time.time() + TIMEOUT_S
    while time.time() < deadline:
        fp, (done, total) = fingerprint(page), progress(page)
        values.add((done, total))
        if not states or states[-1] != fp:
            states.append(fp)
        if page.get_by_text("Done:").count():
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"no 'Done' after {TIMEOUT_S} s; progress seen {sorted(values)}")
    done, total = progress(page)
    assert done == total == 3
    intermediate = {d for d, t in values if t == 3 and 0 < d < 3}
    assert intermediate, f"the progress bar jumped to the end: {sorted(values)}"
    assert len(states) >= 3, states  # empty, some bars, ..., the final bars
    assert page.locator("a[href*='/status']").count() >= 1  # Dask's dashboard
    assert not errors, errors


def test_stop_cancels_the_remaining_tasks(page, app_server):
    open_page(page, app_server)
    start_run(page)
    deadline = time.time() + TIMEOUT_S
    while progress(page)[0] < 1 and time.time() < deadline:
        time.sleep(0.1)
    assert progress(page)[0] >= 1, "no task finished"
    page.get_by_role("button", name="Stop", exact=True).click()
    try:  # also when Stop comes while Dask is still starting (then nothing was submitted)
        page.get_by_text("Stopped:").first.wait_for(timeout=60_000)
    except PlaywrightTimeout:
        pytest.fail(f"no 'Stopped:' 60 s after Stop; progress {progress(page)}, "
                    f"status: {status(page)!r}")
    done, total = progress(page)
    assert done < total == 8
    before = fingerprint(page)
    time.sleep(3)  # cancelled tasks add nothing afterwards
    assert fingerprint(page) == before and progress(page)[0] == done
    assert not page.get_by_role("button", name="Run", exact=True).is_disabled()
