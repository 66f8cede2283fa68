"""The served page of one paper, shared by every ``dashboards/<slug>.py``."""

from __future__ import annotations

import holoviews as hv
import panel as pn

from icml26.dashboards import perf


class ExplorerBase(pn.viewable.Viewer):
    """What every paper's Explorer shares: the alert that explains invalid settings, and
    the live figures of Explorers that define ``live_figures()``.

    ``_error()`` is the message for the current settings ('' when they are valid), by default
    what ``config()`` raises as ``ValueError``; an Explorer calls ``_show_error()`` from a
    watcher on the parameters its config reads, and shows ``self._alert`` above its views.
    """

    def __init__(self, **params):
        if not hasattr(self, "_alert"):  # an Explorer may bring its own (another style)
            self._alert = pn.pane.Alert("", alert_type="danger", visible=False)
        self._rendered_live: list = []  # one LiveFigures per rendering (see live_panes)
        super().__init__(**params)

    def live_panes(self) -> list[pn.Column]:
        """Panes of the Explorer's ``live_figures()`` (``(view, layers)`` pairs), updated in
        place as their parameters move (:class:`icml26.dashboards.live.LiveFigure`)."""
        from icml26.dashboards.live import LiveFigures

        figures = LiveFigures(self)
        self._rendered_live.append(figures)
        return [figures.add(view, layers, sizing_mode="stretch_width")
                for view, layers in self.live_figures()]

    def _error(self) -> str:
        try:
            self.config()
        except ValueError as e:
            return str(e)
        return ""

    def error_message(self) -> str:
        """The message the app shows for the current settings ('' when they are valid)."""
        return self._alert.object if self._alert.visible else ""

    def _show_error(self, text: str | None = None) -> None:
        """Show ``text`` (default: ``_error()``) in the alert, or hide it when empty."""
        text = self._error() if text is None else text
        self._alert.object, self._alert.visible = text or "", bool(text)


def paper_page(intro: str, explorer: pn.viewable.Viewer) -> pn.viewable.Viewable:
    """The paper's citation and a short guide (markdown) above its explorer; loads the
    plotting extensions and the server's live-update settings (:func:`perf.install`)."""
    pn.extension()
    perf.install()
    hv.extension("bokeh")
    return pn.Column(pn.pane.Markdown(intro, sizing_mode="stretch_width"), explorer,
                     sizing_mode="stretch_width")
