"""``perf.install()``: Bokeh's model registry stays exact, and idle freezes stop walking.

The patch lets a ``freeze`` skip the walk over every model when nothing inside it changed the
model graph. These tests drive real apps through many updates (plot data, view swaps, alerts)
and compare the document's registry with a fresh walk after every one.
"""

from __future__ import annotations

import random

import pytest
from bokeh.document import Document
from bokeh.document.models import DocumentModelManager
from test_explorers import fuzzable, random_value

from icml26 import papers
from icml26.dashboards import perf

pn = pytest.importorskip("panel")

REPRODUCED = [p.slug for p in papers.reproduced()]


def walked_ids(doc: Document) -> set:
    return {m.id for root in doc.roots for m in root.references()}


def registered_ids(doc: Document) -> set:
    return set(doc.models._models)


@pytest.mark.parametrize("slug", ["trivial", *REPRODUCED])
def test_registry_matches_a_fresh_walk_after_every_update(slug):
    perf.install()
    if slug == "trivial":
        from icml26.dashboards.browser import TrivialExplorer as Explorer
    else:
        Explorer = papers.get(slug).dashboard().Explorer
    explorer = Explorer()
    doc = Document()
    pn.Column(explorer).server_doc(doc)
    assert registered_ids(doc) == walked_ids(doc)
    params = fuzzable(explorer)
    rng = random.Random(0)
    for _ in range(25):
        name = rng.choice(sorted(params))
        value = random_value(params[name], rng)
        try:
            setattr(explorer, name, value)
        except ValueError:  # an out-of-range combination: the app shows a message
            pass
        assert registered_ids(doc) == walked_ids(doc), f"after {name} = {value!r}"


def test_a_freeze_that_changes_no_reference_does_not_walk(monkeypatch):
    perf.install()
    from bokeh.models import ColumnDataSource, Div

    doc = Document()
    source = ColumnDataSource(data={"x": [1, 2]})
    doc.add_root(source)
    walks = []
    original = DocumentModelManager.recompute
    monkeypatch.setattr(DocumentModelManager, "recompute",
                        lambda self: (walks.append(1), original(self))[1])
    with doc.models.freeze():
        source.data = {"x": [3, 4]}  # data only: the graph is unchanged
    assert walks == []
    with doc.models.freeze():
        source.tags = [Div(text="new model")]  # a new reference: must walk
    assert walks == [1]
    assert registered_ids(doc) == walked_ids(doc)
    with doc.models.freeze():
        doc.add_root(Div(text="root"))  # roots changed inside a freeze: must walk
    assert len(walks) >= 2
    assert registered_ids(doc) == walked_ids(doc)
