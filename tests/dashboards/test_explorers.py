"""Generic checks every built paper's Explorer gets for free (from the registry)."""

from __future__ import annotations

import math
import random
import re
import time
import urllib.request

import numpy as np
import param
import pytest
from bokeh.document import Document

from icml26 import papers

pn = pytest.importorskip("panel")
pyviz_comms = pytest.importorskip("pyviz_comms")

REPRODUCED = [p.slug for p in papers.built()]  # every built paper, blocked ones too
FUZZ_SETTINGS = 200
#: ... or fewer where an app's settings are expensive (recruitment's DP at a 60-recruit
#: budget): the fuzz stops after this many seconds, but never before MIN_FUZZ_SETTINGS
FUZZ_SECONDS, MIN_FUZZ_SETTINGS = 40.0, 40


def explorer_class(slug: str):
    return papers.get(slug).dashboard().Explorer


def view_methods(explorer) -> list[str]:
    """Public ``@param.depends`` methods that are not watchers: the views."""
    names = []
    for name in dir(type(explorer)):
        if name.startswith("_"):
            continue
        fn = getattr(type(explorer), name, None)
        info = getattr(fn, "_dinfo", None)
        if callable(fn) and info is not None and not info.get("watch", False):
            names.append(name)
    return names


def random_value(p: param.Parameter, rng: random.Random):
    if isinstance(p, param.ListSelector):
        objs = list(p.objects)
        return rng.sample(objs, rng.randint(1, len(objs)))
    if isinstance(p, param.Selector):
        return rng.choice(list(p.objects))
    if isinstance(p, param.Boolean):
        return rng.random() < 0.5
    if isinstance(p, param.Integer):
        lo, hi = p.bounds
        return rng.randint(lo, hi)
    if isinstance(p, param.Number):
        lo, hi = p.bounds
        return rng.uniform(lo, hi)
    return None


def fuzzable(explorer) -> dict[str, param.Parameter]:
    out = {}
    for name, p in explorer.param.objects("existing").items():
        if name == "name" or isinstance(p, param.Event) or p.constant or p.readonly:
            continue
        if isinstance(p, param.Number | param.Integer) and (p.bounds is None or None in p.bounds):
            continue
        if isinstance(p, param.Number | param.Selector | param.Boolean):
            out[name] = p
    return out


def assert_finite(data, where: str) -> None:
    if isinstance(data, dict):
        for k, v in data.items():
            assert_finite(v, f"{where}.{k}")
    elif isinstance(data, list | tuple):
        for i, v in enumerate(data):
            assert_finite(v, f"{where}[{i}]")
    elif hasattr(data, "select_dtypes"):  # DataFrame
        num = data.select_dtypes("number").to_numpy(dtype=float)
        assert not np.isnan(num).any(), f"NaN in {where}"
    elif hasattr(data, "__array__") or isinstance(data, float):
        arr = np.asarray(data)
        if arr.dtype.kind in "fc":
            assert not np.isnan(arr).any(), f"NaN in {where}"
    elif isinstance(data, float):
        assert not math.isnan(data), f"NaN in {where}"


@pytest.mark.parametrize("slug", REPRODUCED)
def test_explorer_contract(slug):
    cls = explorer_class(slug)
    assert issubclass(cls, pn.viewable.Viewer)
    e = cls()
    assert view_methods(e), "an Explorer needs at least one @param.depends view"
    for name, p in fuzzable(e).items():
        assert p.doc, f"{slug}.{name} has no doc"
        if isinstance(p, param.Number) and not isinstance(p, param.Selector):
            assert p.bounds is not None and None not in p.bounds, f"{slug}.{name} unbounded"
    assert_finite(e.plot_data(), f"{slug}.plot_data()")


@pytest.mark.parametrize("slug", REPRODUCED)
def test_explorer_survives_random_settings(slug):
    """200 random in-bounds settings (at least 40 in 40 s): no exception, no NaN in the
    plotted data.

    ``plot_data()`` (the numbers every view draws) runs at every setting; the views
    themselves, whose HoloViews construction dominates the cost, at every 5th.
    """
    rng = random.Random(1234)
    e = explorer_class(slug)()
    params = fuzzable(e)
    views = view_methods(e)
    start = time.perf_counter()
    for i in range(FUZZ_SETTINGS):
        if i >= MIN_FUZZ_SETTINGS and time.perf_counter() - start > FUZZ_SECONDS:
            break
        values = {n: random_value(p, rng) for n, p in params.items()}
        # change a few parameters at a time, as a user would, plus some jumps
        keys = list(values) if i % 10 == 0 else rng.sample(list(values), min(2, len(values)))
        e.param.update(**{k: values[k] for k in keys})
        if i % 5 == 0:
            for v in views:
                getattr(e, v)()
        assert_finite(e.plot_data(), f"{slug}.plot_data() after {e.param.values()}")


@pytest.mark.parametrize("slug", REPRODUCED)
def test_invalid_combinations_show_a_message(slug):
    """Combinations param's bounds cannot catch show a message in the app, not a traceback."""
    cls = explorer_class(slug)
    examples = getattr(cls, "INVALID_EXAMPLES", None)
    if not examples:
        pytest.skip(f"{slug} has no parameter combination that bounds do not already rule out")
    for bad in examples:
        e = cls()
        e.param.update(**bad)
        for v in view_methods(e):
            getattr(e, v)()
        alert = e.error_message()
        assert alert, f"{slug}: no message for {bad}"


@pytest.mark.parametrize("slug", REPRODUCED)
def test_app_renders_to_bokeh(slug):
    app = papers.get(slug).dashboard().create_app()
    root = app.get_root(Document(), comm=pyviz_comms.Comm())
    assert root is not None


def test_served_index_and_apps_answer_http(served):
    from icml26.dashboards.app.index import create_index

    port = served({"/": create_index, **{f"/{s}": papers.get(s).dashboard().create_app
                                         for s in REPRODUCED}})
    for route in ["/", *(f"/{s}" for s in REPRODUCED)]:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{route}", timeout=60) as r:
            body = r.read().decode()
        assert r.status == 200 and "bokeh" in body.lower(), route


#: apps whose default Run from an empty cache took minutes in the browser on the loaded machine:
#: each says before a Run how long it takes (issue 32): the base's plan line (``run_status``),
#: from its own ``plan_note`` or the base's recorded default Run
SLOW_RUNS = ("detectrouter", "heima", "panda", "selfflow", "unilid")


@pytest.mark.parametrize("slug", SLOW_RUNS)
def test_a_slow_app_says_what_a_run_costs_before_it(slug, tmp_path, monkeypatch):
    from icml26.dashboards.app import run_costs

    monkeypatch.setenv("ICML26_CACHE", str(tmp_path / "cache"))
    record = tmp_path / "timings.csv"
    record.write_text("timestamp,machine,cores,app,wall_s,cpu_s,load_1min,stage\n"
                      f"t,x86_64,2,{slug},400.0,200.0,4.0,done\n")
    monkeypatch.setattr(run_costs, "TIMINGS_CSV", record)
    e = explorer_class(slug)()
    shown = [p.object for p in e.run_status.objects
             if isinstance(p, pn.pane.Markdown) and p.visible]
    says = e.plan_note()
    assert says in shown and " min" in says and ("idle core" in says or "on 2 cores" in says), \
        (says, shown)
    from icml26.dashboards.app import ExplorerBase

    if type(e).plan_note is ExplorerBase.plan_note:  # the base's line: the record's numbers
        assert "3.3 min of CPU" in says and "6.7 min wall" in says, says


#: apps with a Run (a ``run`` button): every one says what it costs before it (issue 49)
RUN_APPS = [p.slug for p in papers.built() if p.slug != "place_fields"]


@pytest.mark.parametrize("slug", RUN_APPS)
def test_every_app_with_a_run_says_its_cost_before_it(slug):
    """From the committed record (benchmarks/app_run_timings.csv) or the app's own plan:
    a duration in the words of :func:`run_costs.duration`, shown above the Run button."""
    e = explorer_class(slug)()
    assert "run" in e.param, f"{slug} has no Run: take it out of RUN_APPS"
    says = e.plan_note()
    assert re.search(r"\d s\b|\d min\b|seconds", says), (slug, says)
    assert says in [p.object for p in e.run_status.objects
                    if isinstance(p, pn.pane.Markdown) and p.visible]


#: apps whose page is still written by hand (their papers are being reworked elsewhere):
#: move them onto the base's page, then take them out of this set
OWN_PAGE: set[str] = set()


@pytest.mark.parametrize("slug", RUN_APPS)
def test_the_run_button_has_no_tooltip(slug):
    """After a press the Run button's tooltip stayed over the figure titles (issue 49): the
    button is primary, says ``RUN_LABEL`` and has no tooltip; the plan line above it and the
    result note say what a Run does."""
    e = explorer_class(slug)()
    if slug in OWN_PAGE:
        pytest.skip(f"{slug} still writes its own page (OWN_PAGE)")
    runs = [b for b in e.__panel__().select(pn.widgets.Button) if b.name == e.RUN_LABEL]
    assert len(runs) == 1, (slug, e.RUN_LABEL)
    assert runs[0].description is None and runs[0].button_type == "primary", runs[0]


@pytest.mark.parametrize("slug", REPRODUCED)
def test_the_page_comes_from_the_base_or_its_hooks(slug):
    """An app declares its panes; the Explorer base lays the page out (issue 49). An app
    overrides only the documented hooks (``layout.HOOKS``) and what it declares."""
    from icml26.dashboards.app import layout

    cls = explorer_class(slug)
    assert (cls.__panel__ is not layout.PageLayout.__panel__) == (slug in OWN_PAGE), \
        f"{slug}: the page must come from ExplorerBase (or list it in OWN_PAGE)"
    if slug in OWN_PAGE:
        return
    declared = {"result_note", "run_charts"}
    overridden = {name for name, value in vars(layout.PageLayout).items()
                  if callable(value) and getattr(cls, name) is not value}
    assert overridden <= set(layout.HOOKS) | declared, (slug, overridden)
    assert all(f"``{hook}()``" in layout.__doc__ for hook in layout.HOOKS)


def test_place_fields_has_no_run():
    assert "run" not in explorer_class("place_fields")().param


def test_an_app_without_a_record_says_nothing_of_cost(tmp_path, monkeypatch):
    from icml26.dashboards.app import run_costs

    monkeypatch.setattr(run_costs, "TIMINGS_CSV", tmp_path / "none.csv")
    e = explorer_class("detectrouter")()
    assert e.run_cost_note() == "" and e.plan_note() == ""
    assert not [p for p in e.run_status.objects if isinstance(p, pn.pane.Markdown)
                and p.visible and p.object]
