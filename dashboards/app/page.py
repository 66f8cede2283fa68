"""The served page of one paper and the Explorer base every ``dashboards/<slug>.py`` shares."""

from __future__ import annotations

import inspect
import re
import textwrap
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import holoviews as hv
import panel as pn
import param

from icml26 import common, papers, status_table
from icml26.dashboards.app import hvstyle, perf
from icml26.dashboards.app import recorded as recorded_runs
from icml26.dashboards.app.layout import PageLayout
from icml26.dashboards.app.live import LiveFigures
from icml26.dashboards.app.run_costs import recorded_run, recorded_run_words

hvstyle.apply()  # the HoloViews figures' padding (the live figures pad by construction)


class ExplorerBase(PageLayout, pn.viewable.Viewer):
    """What every paper's Explorer shares.

    - the settings alert: ``_error()`` is the message for the current settings ('' when they
      are valid), by default what ``config()`` raises as ``ValueError``; an Explorer calls
      ``_show_error()`` from a watcher on the parameters its config reads, and shows
      ``self._alert`` above its views;
    - live figures: ``live_charts()`` lists ``@param.depends`` methods returning
      :class:`~icml26.dashboards.app.live.Chart`; ``live_panes()`` draws them, updated in place;
    - the Run: ``run_stages()`` runs the heavy stages of a Run one after another with a
      progress bar and the stage's name (``run_status``), ignores a second press while one is
      running, and turns an exception into "Run failed: ..." in the alert. Served apps run
      callbacks on a thread pool (:func:`perf.serve`), so a Run never blocks the server.
      Views of a Run's results depend on ``run_done`` (it counts finished Runs), never on the
      Run button itself: the button's event comes before the results exist;
    - the page (:class:`~icml26.dashboards.app.layout.PageLayout`): controls and Run status
      on the left; the alert, live figures, captions, the result note (``result_note()``,
      redrawn after each Run) and the Run's figures on the right.
    """

    run_done = param.Integer(0, precedence=-1, doc="Finished Runs (views of results follow).")

    #: the app's row in ``benchmarks/app_run_timings.csv`` (None: the paper's slug):
    #: ``run_status`` then says, before any Run, what the default Run cost from an empty
    #: cache (an Explorer that says its own per-setting plan overrides :meth:`plan_note`)
    RUN_RECORD: str | None = None
    #: the attributes a Run keeps (``keep`` sets them; the views read them): what the
    #: recorded default Run restores (:mod:`.recorded`); an app whose Run keeps other state
    #: names it here or overrides :meth:`run_state` and :meth:`restore_run_state`
    RUN_STATE: tuple[str, ...] = ("_result",)

    def __init__(self, recorded: bool = True, **params):
        """``recorded``: show the recorded default Run's result when the settings are the
        default ones (:mod:`.recorded`; False: the page opens as before any Run)."""
        if not hasattr(self, "_alert"):  # an Explorer may bring its own (another style)
            self._alert = pn.pane.Alert("", alert_type="danger", visible=False)
        self._progress = pn.indicators.Progress(value=0, max=100, visible=False,
                                                sizing_mode="stretch_width")
        self._stage = pn.pane.Markdown("", visible=False, margin=(0, 10))
        self._plan = pn.pane.Markdown("", margin=(0, 10), sizing_mode="stretch_width")
        self._running = threading.Lock()
        self._stage_now: list = [0, 1, "", None, "computing", ""]  # i, n, label, cache, verb,
        # and the sub-step's text (see _stage_text)
        self._rendered_live: list[LiveFigures] = []  # one per rendering (see live_panes)
        self._init_layout()
        super().__init__(**params)
        if recorded and "run" in self.param:
            self._show_recorded()
        self._watch_result_note()
        if "run" in self.param and hasattr(self, "start_run"):
            self.param.watch(self._press_run, "run")
        stepped = [name for name, p in self.param.objects().items()
                   if isinstance(p, param.Number) and not isinstance(p, param.Integer)
                   and getattr(p, "step", None)]
        if stepped:
            self.param.watch(self._snap_to_digits, stepped)
        self._update_plan()
        if type(self).plan_note is not ExplorerBase.plan_note:  # it depends on the settings
            self.param.watch(self._update_plan,
                             [n for n in self.param.objects() if n != "name"])

    # ------------------------------------------------------------------ the recorded Run
    def run_state(self) -> dict:
        """What the last Run kept (``RUN_STATE``'s attributes), as recorded."""
        return {name: getattr(self, name) for name in self.RUN_STATE}

    def restore_run_state(self, state: dict) -> None:
        """Take ``state`` (:meth:`run_state` of a recorded Run) as the last Run's."""
        for name, value in state.items():
            setattr(self, name, value)

    def _show_recorded(self) -> None:
        """At the default settings, the recorded default Run's result with its label."""
        slug = self.RUN_RECORD or self.paper_slug()
        record = recorded_runs.load(self, slug) if slug else None
        if record is not None:
            self.restore_run_state(record["state"])
            self._recorded_note.object = recorded_runs.recorded_note(record)
            self._recorded_note.visible = True

    def _snap_to_digits(self, *events) -> None:
        """A slider's value without the arithmetic noise of its steps: 0.3 + 0.05 - 0.05 is
        0.29999999999999993 in the browser, a different cache key from 0.3 (panda's Run
        retrained for minutes after a step right and back)."""
        snapped = {e.name: round(e.new, 12) for e in events  # several: one param.update
                   if isinstance(e.new, float) and round(e.new, 12) != e.new}
        if snapped:
            self.param.update(**snapped)

    # ------------------------------------------------------------------ the status line
    def status_line(self) -> str:
        """The paper's computed status and its headline claims' estimates over the committed
        seeds (:func:`status_line`), '' for an Explorer that is no paper's
        (``dashboards/<slug>.py`` names the paper; :func:`paper_page` shows it on top)."""
        slug = self.paper_slug()
        return status_line(slug) if slug else ""

    def paper_slug(self) -> str:
        """The paper ``dashboards/<slug>.py`` shows ('' for an Explorer that is no paper's);
        read from the file, so it holds under ``panel serve <file>`` too."""
        slug = Path(inspect.getfile(type(self))).stem
        return slug if slug in {p.slug for p in papers.PAPERS} else ""

    # ------------------------------------------------------------------ settings
    def settings_key(self) -> str:
        """A key of every parameter's current value, to memoise what a step computes once
        but several views (and the error check) ask for."""
        return repr(sorted(self.param.values().items()))

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

    # ------------------------------------------------------------------ live figures
    def live_charts(self) -> list[Callable]:
        """The Explorer's live chart methods, in page order (none by default)."""
        return []

    def plot_data(self) -> dict:
        """The numbers behind the views (the explorer tests check them for NaN); by default
        every series of every live chart. An Explorer with other views overrides it."""
        data = {}
        for chart_fn in self.live_charts():
            chart = chart_fn()
            if chart is None:  # invalid settings: the figure keeps its last valid state
                continue
            for i, series in enumerate(chart.series):
                data[f"{chart_fn.__name__}[{i}]"] = (series.x, series.y) \
                    if series.kind in ("line", "scatter") else series.at
        return data

    def live_panes(self) -> list[pn.Column]:
        """Views of ``live_charts()`` (legend above plot), updated in place as their
        parameters move."""
        figures = LiveFigures(self)
        self._rendered_live.append(figures)
        return [figures.add(chart) for chart in self.live_charts()]

    # ------------------------------------------------------------------ the Run
    @property
    def run_status(self) -> pn.Column:
        """What a Run costs, said before it (:meth:`plan_note`), then the progress bar and the
        running stage's name (place it near the Run button)."""
        return pn.Column(self._plan, self._stage, self._progress, sizing_mode="stretch_width")

    def plan_note(self) -> str:
        """What a Run at the current settings costs, said before it ('' says nothing). By
        default the recorded cost of the default Run (:meth:`run_cost_note`); an Explorer
        whose Run cost depends on its settings overrides it (it is then re-read whenever a
        parameter moves or a Run ends)."""
        return self.run_cost_note()

    def _update_plan(self, *_events) -> None:
        text = self.plan_note()
        if self._plan.object != text:
            self._plan.object = text
        self._plan.visible = bool(text)

    def run_cost_note(self) -> str:
        """What the default Run cost from an empty cache (``RUN_RECORD``'s last row), said
        before a Run: '' without a record."""
        record = self.RUN_RECORD or self.paper_slug()
        cost = recorded_run(record) if record else None
        if cost is None:
            return ""
        return (f"**A Run** computes what its settings do not find in the cache "
                f"({recorded_run_words(cost)}). From the cache: seconds.")

    def run_config(self, read: Callable | None = None):
        """The Run's config (``read()``, by default ``self.config()``), or None once the alert
        says why the settings are invalid (the Run then does nothing)."""
        try:
            return (read or self.config)()
        except ValueError as e:
            self._show_error(str(e))
            return None

    def _press_run(self, *_events) -> None:
        """The Run button of an Explorer with ``start_run(cfg)``: that, with the settings'
        config, or nothing when they are invalid (the alert says why)."""
        cfg = self.run_config()
        if cfg is not None:
            self.start_run(cfg)

    def run_stages(self, stages: Sequence[tuple], keep: Callable[[list], None]) -> bool:
        """Run ``(label, compute)`` stages in order, showing "i/n: label…" and a bar, then
        ``keep(results)`` (store them) and count the Run in ``run_done`` (views redraw).

        The stage text says what the on-disk cache did (:func:`icml26.common.cache_listener`,
        decided here for every app, never typed into a label): "read from the cache", or "not
        in the cache: computing" (a stage may name its verb: ``(label, compute, "training")``)
        as soon as the stage asks for an entry; a stage that asks for none says neither.
        :meth:`stage_progress` shows a stage's own sub-steps under the same line.

        False when a Run is already going (the press is ignored) or a stage raised (the
        alert says "Run failed: ..."; the server lives on). A Run whose stages all ran hides
        the alert before ``keep`` (which may show a message of its own).
        """
        if not self._running.acquire(blocking=False):
            return False
        results: list = []
        computed: list[str] = []  # labels of the stages that computed a missing entry
        start = time.perf_counter()
        try:
            self._progress.value, self._progress.visible = 0, True
            self._stage.visible = True
            for i, (label, compute, *verb) in enumerate(stages):
                self._stage_now = [i + 1, len(stages), label, None, verb[0] if verb
                                   else "computing", ""]

                def hear(event: str, _path, now=self._stage_now) -> None:
                    if now[3] != "compute":  # a stage that computed anything computes
                        now[3] = event
                        self._stage.object = self._stage_text()

                self._stage.object = self._stage_text()
                with common.cache_listener(hear):
                    results.append(compute())
                if self._stage_now[3] == "compute":
                    computed.append(label)
                self._progress.value = int(100 * (i + 1) / len(stages))
            self._show_error("")  # the Run worked: what the alert said (a failure) is past
            keep(results)
            self._recorded_note.visible = False  # what the page shows is this Run's now
            self.run_done += 1  # the result views redraw before "Run done" says they did
            self._stage.object = (f"Run done in {time.perf_counter() - start:.1f} s"
                                  + (f" (computed, now cached: {len(computed)} of "
                                     f"{len(stages)} stages)." if computed else "."))
            return True
        except Exception as e:  # noqa: BLE001 - shown to the user, the server must live
            self._show_error(f"Run failed: {type(e).__name__}: {e}")
            self._stage.object = "Run failed (see the message above)."
            return False
        finally:
            self._progress.visible = False
            self._running.release()

    def _stage_text(self) -> str:
        i, n, label, cache, verb, detail = self._stage_now
        note = {"read": " (read from the cache)",
                "compute": f" (not in the cache: {verb} now, then cached)"}.get(cache, "")
        return f"**Run {i}/{n}:** {label}{note}{detail}…"

    def stage_progress(self, text: str, frac: float) -> None:
        """A sub-step of the running stage (``text``, ``frac`` of the stage done): shown after
        the stage's line and its cache note; the bar moves with it."""
        i, n = self._stage_now[:2]
        self._stage_now[5] = f": {text} ({100 * frac:.0f}%)"
        self._stage.object = self._stage_text()
        self._progress.value = int(100 * (max(i - 1, 0) + frac) / n)


#: characters per line of a message_plot: the text is drawn centred and unclipped only while
#: a line fits the narrowest frame ("ress Run for the Monte Carlo compariso" did not)
MESSAGE_LINE = 28


def message_plot(text: str) -> hv.Element:
    """A plot-sized box with a message (e.g. "Press Run for ...") where a figure will come,
    wrapped to lines of at most :data:`MESSAGE_LINE` characters."""
    lines = [w for line in text.splitlines() for w in textwrap.wrap(line, MESSAGE_LINE) or [""]]
    return hv.Text(0.5, 0.5, "\n".join(lines)).opts(xaxis=None, yaxis=None, toolbar=None,
                                                    responsive=True, min_height=300)


#: px of one panel of a multi-panel figure: three side by side fit a notebook (~1000 px) and
#: an app's main column at 1400 px (the controls take 320)
PANEL_WIDTH = 330


def figure_grid(panels, ncols: int = 3) -> pn.GridBox:
    """The panels of a multi-panel figure (an ``hv.Layout`` or a list of elements), ``ncols``
    to a row: three PANEL_WIDTH panels fit a 1400 px page beside the controls (a grid of
    three 420 px panels made it 1630 px wide). Separate panes: a HoloViews grid that replaced
    a "Press Run" message in a live page was laid out at 0 x 0 px in Chromium, and so were
    the panes of a wrapping ``pn.FlexBox``."""
    return pn.GridBox(*(pn.pane.HoloViews(p) for p in panels), ncols=ncols)


def status_line(slug: str) -> str:
    """``Status: <label>`` (:func:`icml26.status.status`, computed from the committed per-seed
    values; a blocked or pending paper's reason beside it), then each headline claim's estimate
    over the committed seeds and its verdict (:func:`icml26.status_table.headline_text`, as in
    the README and the index). Cheap: reads ``benchmarks/claim_values.csv``, computes no claim."""
    st = papers.get(slug).status_info()
    why = f" ({st.reason})" if st.word in ("blocked", "pending") else ""
    heads = " · ".join(status_table.headline_text(h) for h in st.headlines) or "none"
    return f"Status: {st.label}{why}. Headline claims over the committed seeds: {heads}."


def _markdown_text(text: str) -> str:
    """``text`` shown as written in Markdown (its markup characters escaped)."""
    return re.sub(r"([\\`*_\[\]<>|#])", r"\\\1", text)


def app_factory(explorer: type, intro: str | Callable[[], str]
                ) -> Callable[[], pn.viewable.Viewable]:
    """``create_app`` of ``dashboards/<slug>.py``: the served page (:func:`paper_page`) of a
    new ``explorer`` under ``intro`` (the paper's citation and a short guide, markdown; a
    function where it says something read when the page is built)."""
    def create_app() -> pn.viewable.Viewable:
        """The served page: the paper's citation above the explorer."""
        return paper_page(intro() if callable(intro) else intro, explorer())
    return create_app


def paper_page(intro: str, explorer: pn.viewable.Viewer) -> pn.viewable.Viewable:
    """The paper's computed status line (:meth:`ExplorerBase.status_line`, computed here, at
    page build), its citation and a short guide (markdown) above its explorer; loads the
    plotting extensions and the page settings (:func:`perf.install`)."""
    pn.extension()
    perf.install()
    hv.extension("bokeh")
    line = explorer.status_line() if isinstance(explorer, ExplorerBase) else ""
    if line:  # one pane with the intro: the intro stays the page's first object
        intro = f"**Status:** {_markdown_text(line.removeprefix('Status: '))}\n\n{intro}"
    return pn.Column(pn.pane.Markdown(intro, sizing_mode="stretch_width"), explorer,
                     sizing_mode="stretch_width")
