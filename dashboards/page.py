"""The served page of one paper, shared by every ``dashboards/<slug>.py``."""

from __future__ import annotations

import holoviews as hv
import panel as pn

from icml26.dashboards import perf


def paper_page(intro: str, explorer: pn.viewable.Viewer) -> pn.viewable.Viewable:
    """The paper's citation and a short guide (markdown) above its explorer; loads the
    plotting extensions and the server's live-update settings (:func:`perf.install`)."""
    pn.extension()
    perf.install()
    hv.extension("bokeh")
    return pn.Column(pn.pane.Markdown(intro, sizing_mode="stretch_width"), explorer,
                     sizing_mode="stretch_width")
