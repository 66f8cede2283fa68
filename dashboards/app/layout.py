"""The page skeleton every Explorer shares (:class:`PageLayout`, a base of
:class:`~icml26.dashboards.app.page.ExplorerBase`): an app declares its panes, the base lays
them out.

The page is two columns::

    controls (the settings, the Run button)  | the settings alert
    run_status (the Run's cost, its progress)| live figures, LIVE_ROW to a row
                                             | LIVE_CAPTION
                                             | the result note (result_note(), after each Run)
                                             | the Run's figures (result_panes())

An app sets ``RUN_LABEL`` (the Run button's text), ``WIDGETS`` (widget specs beyond the Run
button's), ``LIVE_CAPTION`` and, to have a result note, defines ``result_note()``. Where its
page differs it overrides one of the :data:`HOOKS`, never ``__panel__``:
``control_column()`` (e.g. grouped settings), ``alert_panes()`` (another message beside the
alert), ``live_rows()`` (live figures mixed with other panes), ``note_panes()`` (the captions
between the live figures and the Run's), ``result_panes()`` (the Run's figures and anything
else below the note); ``STATUS_BY_RESULTS`` moves ``run_status`` above the Run's figures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import panel as pn
import param

from icml26.dashboards.app.live import LiveFigures

#: the methods an Explorer may override to change its page (tests/dashboards checks that no
#: app writes its own ``__panel__``)
HOOKS = ("control_column", "alert_panes", "live_rows", "note_panes", "result_panes")

STRETCH = {"sizing_mode": "stretch_width"}


def rows(panes: Sequence, per_row: int = 2) -> list[pn.Row]:
    """``panes`` in rows of ``per_row`` (the last row may hold fewer), each stretched."""
    return [pn.Row(*panes[i:i + per_row], **STRETCH) for i in range(0, len(panes), per_row)]


def run_chart(method: Callable | str, *also: str) -> Callable:
    """A chart of the Run's result: follows ``run_done`` and is None (no figure yet) until a
    Run has kept its result in ``self._result``; ``method`` then draws it. Written
    ``@run_chart``, or ``@run_chart("name", ...)`` for a chart that follows those
    parameters too."""
    if isinstance(method, str):
        return functools.partial(_run_chart, deps=(method, *also))
    return _run_chart(method, ())


def _run_chart(method: Callable, deps: tuple[str, ...]) -> Callable:
    @functools.wraps(method)
    def chart(self):
        return None if self._result is None else method(self)
    return param.depends("run_done", *deps)(chart)


class PageLayout:
    """The page of an Explorer (see the module's docstring); mixed into ExplorerBase."""

    #: the Run button's text (the button has no tooltip: the plan line above it and the
    #: result note say what a Run does, and a tooltip stayed over the figures after a press)
    RUN_LABEL = "Run"
    #: ``pn.Param`` widget specs beyond the Run button's, e.g. ``{"policies":
    #: pn.widgets.CheckBoxGroup}``
    WIDGETS: dict = {}
    #: markdown under the live figures ('' for none)
    LIVE_CAPTION = ""
    #: live figures to a row (the default ``live_rows``)
    LIVE_ROW = 2
    #: the Run's figures to a row (the default ``result_panes``)
    RUN_ROW = 2
    #: ``run_status`` (the Run's cost and progress) above the Run's figures, not under the
    #: Run button
    STATUS_BY_RESULTS = False

    def _init_layout(self) -> None:
        """Before ``param.Parameterized.__init__``: the Run's result and its note's pane."""
        if not hasattr(self, "_result"):
            self._result = None
        if not hasattr(self, "_result_caption"):  # an app's own page may bring its own
            self._result_caption = pn.pane.Markdown("", **STRETCH)
        # the label of a recorded default Run's result (ExplorerBase._show_recorded)
        self._recorded_note = pn.pane.Alert("", alert_type="info", visible=False, **STRETCH)

    def _watch_result_note(self) -> None:
        """After it: the result note follows ``run_done`` and what ``result_note`` depends on."""
        if not self.has_result_note():
            return
        declared = hasattr(type(self).result_note, "_dinfo")  # else it would depend on all
        deps = {d.name for d in self.param.method_dependencies("result_note")
                if d.inst is self} if declared else set()
        self.param.watch(self._redraw_result_note, sorted(deps | {"run_done"}))
        self._redraw_result_note()

    # ------------------------------------------------------------------ declared by the app
    def result_note(self) -> str:
        """What the last Run found (or "press **Run** ..." before one), shown above the Run's
        figures and redrawn after each Run (and when a parameter it ``@param.depends`` on
        moves); an app without a note leaves it undefined."""
        return ""

    def has_result_note(self) -> bool:
        return type(self).result_note is not PageLayout.result_note

    def _redraw_result_note(self, *_events) -> None:
        text = self.result_note()
        if self._result_caption.object != text:
            self._result_caption.object = text

    def run_charts(self) -> list[Callable]:
        """The Run's chart methods (:func:`run_chart`), in page order (none by default)."""
        return []

    def run_panes(self) -> list[pn.Column]:
        """Views of ``run_charts()``, drawn when a Run ends and then updated in place
        (separate Bokeh panes: a HoloViews Layout swapped in after a Run drew blank)."""
        figures = LiveFigures(self)
        return [figures.add(chart) for chart in self.run_charts()]

    # ------------------------------------------------------------------ the controls
    def widgets(self) -> dict:
        """The widget specs of :meth:`controls`: ``WIDGETS`` and the Run button (primary,
        labelled ``RUN_LABEL``, no tooltip)."""
        specs = dict(self.WIDGETS)
        if "run" in self.param:
            specs["run"] = {"type": pn.widgets.Button, "color": "primary",
                            "name": self.RUN_LABEL, "description": None}
        return specs

    def controls(self, parameters: list[str] | None = None) -> pn.Param:
        """The settings' widgets (``parameters``: only these, in this order)."""
        chosen = {} if parameters is None else {"parameters": parameters}
        return pn.Param(self.param, show_name=False, widgets=self.widgets(), **chosen)

    # ------------------------------------------------------------------ hooks
    def control_column(self) -> pn.Column:
        """The left column: the settings with the Run button, then ``run_status``."""
        status = [] if self.STATUS_BY_RESULTS else [self.run_status]
        return pn.Column(self.controls(), *status, width=320)

    def alert_panes(self) -> list:
        """The settings alert (on top of the right column)."""
        return [self._alert]

    def live_rows(self) -> list:
        """The live figures, ``LIVE_ROW`` to a row."""
        return rows(self.live_panes(), self.LIVE_ROW)

    def note_panes(self) -> list:
        """``LIVE_CAPTION``, the label of a recorded result and the result note."""
        caption = [pn.pane.Markdown(self.LIVE_CAPTION, **STRETCH)] if self.LIVE_CAPTION else []
        return caption + [self._recorded_note] + (
            [self._result_caption] if self.has_result_note() else [])

    def result_panes(self) -> list:
        """The Run's figures, ``RUN_ROW`` to a row."""
        return rows(self.run_panes(), self.RUN_ROW)

    def __panel__(self):
        status = [self.run_status] if self.STATUS_BY_RESULTS else []
        right = pn.Column(*self.alert_panes(), *self.live_rows(), *self.note_panes(),
                          *status, *self.result_panes(), **STRETCH)
        return pn.Row(self.control_column(), right, **STRETCH)
