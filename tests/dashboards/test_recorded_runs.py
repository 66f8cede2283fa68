"""The recorded default Runs (issue 49: a page opens on the paper's result, not on "press Run").

Every app with a Run has a record at today's default settings; the page built at those
settings shows the recorded result under its label, and at any other setting it does not; a
cheap app's fresh Run says what its record says.
"""

from __future__ import annotations

import importlib

import param
import pytest

from icml26 import papers
from icml26.dashboards.app import recorded

RUN_APPS = [p.slug for p in papers.PAPERS
            if "run" in importlib.import_module(f"icml26.dashboards.{p.slug}").Explorer.param]
#: apps whose default Run takes a few seconds here: the test reruns them and compares
CHEAP = ("recruitment", "promotion", "spurious_dpo", "tpv")
#: a record is a summary of a Run, not its models
MAX_RECORD_BYTES = 400_000


def explorer(slug: str, **kw):
    return importlib.import_module(f"icml26.dashboards.{slug}").Explorer(**kw)


def shown(ex) -> list:
    """What the page's Run panes draw now (None where a chart waits for a Run)."""
    return [chart() for chart in ex.run_charts()]


@pytest.mark.parametrize("slug", RUN_APPS)
def test_every_app_with_a_run_has_a_record_at_its_default_settings(slug):
    path = recorded.record_path(slug)
    assert path.exists(), (f"{slug}: no recorded default Run; record it with "
                           f"`python -m icml26.dashboards.app.recorded {slug}`")
    assert path.stat().st_size <= MAX_RECORD_BYTES
    ex = explorer(slug)
    assert recorded.load(ex, slug) is not None, (
        f"{slug}: the record was made at other settings than today's defaults; re-record it "
        f"with `python -m icml26.dashboards.app.recorded {slug}`")


@pytest.mark.parametrize("slug", RUN_APPS)
def test_the_page_opens_on_the_recorded_result(slug):
    ex, before = explorer(slug), explorer(slug, recorded=False)
    assert ex._recorded_note.visible and "Recorded result" in ex._recorded_note.object
    assert not before._recorded_note.visible
    assert repr(ex.run_state()) != repr(before.run_state())  # the Run's state is there
    if ex.run_charts():
        assert all(view is not None for view in shown(ex))
        assert all(view is None for view in shown(before))
    if ex.has_result_note():
        assert ex.result_note() != before.result_note()


@pytest.mark.parametrize("slug", RUN_APPS[:3])
def test_another_setting_opens_without_the_record(slug):
    """The mutation: a record made at other settings is not shown as this setting's."""
    ex = explorer(slug)
    name, p = next((n, p) for n, p in ex.param.objects().items()
                   if isinstance(p, param.Integer) and n not in recorded.NOT_SETTINGS
                   and p.bounds and p.bounds[1] is not None and p.default < p.bounds[1])
    other = explorer(slug, **{name: p.default + 1})
    assert not other._recorded_note.visible
    assert recorded.load(other, slug) is None


@pytest.mark.slow
@pytest.mark.parametrize("slug", CHEAP)
def test_a_fresh_run_says_what_the_record_says(slug, tmp_path, monkeypatch):
    monkeypatch.setenv("ICML26_CACHE", str(tmp_path))
    ex = explorer(slug)
    kept = ex.result_note() if ex.has_result_note() else repr(ex.plot_data())
    ex.param.trigger("run")
    assert ex.run_done == 1 and not ex._recorded_note.visible
    assert (ex.result_note() if ex.has_result_note() else repr(ex.plot_data())) == kept
