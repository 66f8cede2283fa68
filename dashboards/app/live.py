"""Live figures: Bokeh figures whose data sources the explorer owns, updated in place.

Why: a HoloViews ``DynamicMap`` re-runs its whole plotting pipeline on every slider step
(element construction, option lookup, range computation, glyph update, a walk of the page's
model graph), and Panel sends each plot's update as a message of its own. A live figure is
instead described by ONE function of the explorer returning a :class:`Chart` (numbers,
labels, colours: no plotting objects); it is drawn once with Bokeh's public plotting API and
every later step only assigns new columns to its ``ColumnDataSource`` objects, moves its
``Span`` marks and relabels its legend. The charts of a step are computed where the step runs
(a worker thread of the server), and all its figures are then changed in one
:func:`panel.io.hold` on the document's event loop (``pn.state.execute``): from the loop,
Panel sends the held changes as ONE message, so the browser applies them together and paints
each figure once. (Held on a worker thread, they went out as one message per changed property,
and the browser painted between them: a step of a three-figure page took 1.2-1.3x the trivial
app's; see ``benchmarks/dashboard_latency.csv``.)

Axes are ``Range1d`` set here, in the same held message as the data, by the rules of
:mod:`.axes` (padding, kept while the data fills half, tickers, equal aspect for geometry). So
data never leaves the plot, small steps move the curves and not the axes, and the browser draws
a step once. (``DataRange1d``, refitted by the browser, cost a data-bounds pass and a re-layout
per changed source: 1.3-1.9x the trivial app's step.) The legend sits outside the frame (above
it, as HTML), so it never covers data.

The same function draws the figure in the notebook (:func:`figure`), in the served app and in
the tests; :func:`chart_ranges` gives the data extent the browser test checks against.
"""

from __future__ import annotations

import functools
import html
import itertools
from collections.abc import Callable
from functools import partial

import numpy as np
import panel as pn
import param
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, Legend, LegendItem, Range1d, Span
from bokeh.models import Line as BokehLine
from bokeh.plotting import figure as bokeh_figure

from icml26.dashboards.app.axes import (  # noqa: F401  (public here too)
    GEOMETRY_BORDERS,
    MIN_FILL,
    MIN_HEIGHT,
    PAD,
    axes_hold_data,
    fitted_ranges,
    frame_size,
    integer_valued,
    kept_or_fitted,
    log_ticker,
    plain_labels,
    style_axis,
    ticker,
)
from icml26.dashboards.app.chart import (  # noqa: F401
    KINDS,
    Chart,
    Series,
    chart_ranges,
    coinciding_lines,
    separate_coinciding,
)

#: a static legend's item in px: the swatch and gaps, plus a 12 px label's characters
LEGEND_ITEM_PX, LEGEND_CHAR_PX = 40, 7.0
#: px a stretched static figure keeps beside its legend row (axis, toolbar)
LEGEND_SIDE_PX = 90
#: px a row of a static legend takes (12 px labels, as painted)
LEGEND_ROW_PX = 32


#: characters of a title line: 13 px bold at ~7.3 px a character fills the frame of a figure
#: ~370 px wide (two beside the controls in JupyterLab); a longer title is wrapped, and
#: unwrapped one was clipped there ("Exact value in the surrogate model (")
TITLE_CHARS = 44
#: px a title line past the first takes (13 px text), added to the figure's height
TITLE_LINE_PX = 17


def wrap_title(title: str) -> str:
    """``title`` in lines of at most :data:`TITLE_CHARS` (where a word allows), broken
    before a parenthesis where one starts in the second half of the line, else at a space."""
    lines, rest = [], title
    while len(rest) > TITLE_CHARS:
        cut = rest.rfind(" (", TITLE_CHARS // 2, TITLE_CHARS + 1)
        cut = cut if cut > 0 else rest.rfind(" ", 0, TITLE_CHARS + 1)
        if cut <= 0:
            break
        lines.append(rest[:cut])
        rest = rest[cut + 1:]
    return "\n".join([*lines, rest])


def static_legend_shape(labels: list[str]) -> tuple[int, int]:
    """``(columns, min_width)`` of a static figure's legend above the plot: one row when it
    fits the narrowest figure (300 px), else two columns, and a figure at least as wide as
    its widest row, so a grid of notebook figures never clips a legend (issue 49)."""
    widths = [LEGEND_ITEM_PX + LEGEND_CHAR_PX * len(label) for label in labels]
    cols = len(widths) if sum(widths) + LEGEND_SIDE_PX <= 300 else min(2, len(widths))
    rows = [sum(widths[i:i + cols]) for i in range(0, len(widths), cols)]
    return cols, int(max(300, LEGEND_SIDE_PX + max(rows, default=0)))


def figure(chart: Chart, live: bool = False):
    """A new Bokeh figure drawing ``chart`` (one owned source per line/scatter layer).

    ``live=True``: no toolbar and no Bokeh legend (the live figure shows
    :func:`legend_html` above the plot). Bokeh lays its toolbar out and measures every legend
    label again on each repaint: with them a slider step of a four-figure app took 1.35-1.8x
    the trivial app's, without them 1.1-1.25x (benchmarks/dashboard_latency.csv). A live
    figure follows the sliders; the notebook's static copies (:func:`show`) keep zoom, save
    and a legend that hides a line on click. Coinciding lines get dashes of their own
    (:func:`separate_coinciding`)."""
    chart = separate_coinciding(chart)
    frame = frame_size(chart) if chart.geometry else None
    ranges = fitted_ranges(chart, frame)
    size = _geometry_size(frame, live, any(x.label for x in chart.series)) if frame else (
        dict(height=max(chart.height, MIN_HEIGHT), sizing_mode="stretch_width", min_width=300))
    title = wrap_title(chart.title)
    extra = TITLE_LINE_PX * title.count("\n")  # the lines past the first, above the frame
    size["height"] += extra
    if "min_border_top" in size:  # a geometry figure's frame keeps its size
        size["min_border_top"] += extra
    fig = bokeh_figure(title=title, x_axis_label=chart.x_label,
                       y_axis_label=chart.y_label, **size,
                       x_axis_type="log" if chart.x_log else "linear",
                       y_axis_type="log" if chart.y_log else "linear",
                       x_range=Range1d(*ranges[0]), y_range=Range1d(*ranges[1]),
                       tools="" if live else "pan,wheel_zoom,box_zoom,reset,save",
                       toolbar_location=None if live else "right",
                       output_backend="canvas")
    fig.title.text_font_size = "13px"
    for axis, bokeh_axis in ((0, fig.xaxis), (1, fig.yaxis)):
        style_axis(bokeh_axis, chart, axis, ranges[axis])
    items = []
    for s in chart.series:
        if s.kind in ("vline", "hline"):
            fig.add_layout(Span(location=_finite_or_none(s.at),
                                dimension="height" if s.kind == "vline" else "width",
                                line_color=s.color, line_dash=s.dash, line_width=s.width))
            continue
        source = ColumnDataSource(s.columns())
        if s.kind == "line":
            renderer = fig.line("x", "y", source=source, line_color=s.color,
                                line_dash=s.dash, line_width=s.width, name=s.label)
        else:
            renderer = fig.scatter("x", "y", source=source, color=s.color, size=7)
        if s.label is not None:
            items.append(LegendItem(label=value(s.label), renderers=[renderer]))
    if items and not live:
        cols, min_width = static_legend_shape([i.label.value for i in items])
        if fig.sizing_mode == "stretch_width":
            fig.min_width = min_width
        # each legend row past the first takes its height from the frame: add it instead
        fig.height += LEGEND_ROW_PX * (-(-len(items) // cols) - 1)
        fig.add_layout(Legend(items=items, orientation="horizontal", click_policy="hide",
                              ncols=cols,
                              label_text_font_size="12px", spacing=12, padding=2,
                              margin=2, border_line_alpha=0), "above")
    return fig


def _geometry_size(frame: tuple[int, int], live: bool, legend: bool) -> dict:
    """The size of a geometry figure whose frame is exactly ``frame``: a fixed outer size
    less fixed borders that hold the axes, the title and (a static figure's) legend above and
    toolbar on the right (Bokeh grows a border only past its minimum)."""
    left, top, right, bottom = GEOMETRY_BORDERS
    if not live:
        top, right = top + 25 * legend, right + 35
    return dict(width=frame[0] + left + right, height=frame[1] + top + bottom,
                min_border_left=left, min_border_top=top, min_border_right=right,
                min_border_bottom=bottom, sizing_mode="fixed")


def legend_html(chart: Chart) -> str:
    """The legend of a live figure as HTML: a swatch (line, dash or dot) and the label of
    every labelled line or scatter, in order; then which lines lie on which (each drawn with
    a dash of its own, :func:`coinciding_lines`): the app's caption says why."""
    items = []
    chart, pairs = coinciding_lines(chart)
    for s in chart.series:
        if s.label is None or s.kind not in ("line", "scatter"):
            continue
        if s.kind == "scatter":
            swatch = (f'<span style="display:inline-block;width:8px;height:8px;'
                      f'border-radius:50%;background:{s.color}"></span>')
        else:
            style = {"dashed": "dashed", "dotted": "dotted", "dotdash": "dashed",
                     "dashdot": "dashed"}.get(s.dash, "solid")
            swatch = (f'<span style="display:inline-block;width:22px;vertical-align:middle;'
                      f'border-top:{max(s.width, 2):g}px {style} {s.color}"></span>')
        items.append(f'<span style="margin-right:14px;white-space:nowrap">{swatch} '
                     f'{html.escape(s.label)}</span>')
    if not items:
        return ""
    note = "; ".join(f"“{html.escape(top)}” lies on “{html.escape(under)}”"
                     for top, under in pairs)
    if note:
        note = (f'<div style="color:#555">{note} (the one on top has a dash of its own: both '
                f"are drawn)</div>")
    return f'<div style="font-size:12px;line-height:1.6">{"".join(items)}{note}</div>'


def show(chart: Chart) -> pn.pane.Bokeh:
    """A pane drawing ``chart`` once (the notebook's static copy of a live figure)."""
    return pn.pane.Bokeh(figure(chart), sizing_mode=_sizing(chart))


def _sizing(chart: Chart | None) -> str:
    """A geometry figure has a frame of fixed size (its aspect); the others stretch."""
    return "fixed" if chart is not None and chart.geometry else "stretch_width"


def update(fig, chart: Chart) -> None:
    """Write ``chart``'s numbers into ``fig`` (drawn from a chart of the same structure),
    and the dashes :func:`separate_coinciding` gives lines that coincide now."""
    chart = separate_coinciding(chart)
    lines = [r for r in fig.renderers]
    marks = [m for m in fig.center if isinstance(m, Span)]
    legends = [m for m in fig.above if isinstance(m, Legend)]
    labels = [s.label for s in chart.series if s.kind in ("line", "scatter")
              and s.label is not None]
    line_series = [s for s in chart.series if s.kind in ("line", "scatter")]
    mark_series = [s for s in chart.series if s.kind in ("vline", "hline")]
    if len(lines) != len(line_series) or len(marks) != len(mark_series):
        raise ValueError(f"the figure has {len(lines)} lines and {len(marks)} marks, the "
                         f"chart {len(line_series)} and {len(mark_series)}: draw it anew")
    for renderer, s in zip(lines, line_series):
        if not _same(renderer.data_source.data, s):
            renderer.data_source.data = s.columns()
        if s.kind == "line" and renderer.glyph.line_dash != _dash_value(s.dash):
            renderer.glyph.line_dash = s.dash
    for span, s in zip(marks, mark_series):
        location = _finite_or_none(s.at)
        if span.location != location:
            span.location = location
    if legends:
        for item, label in zip(legends[0].items, labels):
            if getattr(item.label, "value", None) != label:
                item.label = value(label)  # a bare string would name a data column
    if fig.title.text != wrap_title(chart.title):
        fig.title.text = wrap_title(chart.title)
    current = ((fig.x_range.start, fig.x_range.end), (fig.y_range.start, fig.y_range.end))
    frame = (fig.width - fig.min_border_left - fig.min_border_right,
             fig.height - fig.min_border_top - fig.min_border_bottom) if chart.geometry else None
    ranges = kept_or_fitted(chart, current, frame)
    for axis, rng in ((0, fig.x_range), (1, fig.y_range)):
        start, end = ranges[axis]
        if (rng.start, rng.end) != (start, end):
            rng.update(start=start, end=end)
            if chart.log(axis):  # its ticks were fixed for the old range
                style_axis((fig.yaxis if axis else fig.xaxis)[0], chart, axis, (start, end))


@functools.cache
def _dash_value(dash: str):
    """A dash name as a Bokeh glyph holds it once set (``"dashed"`` -> ``[6]``), to compare."""
    return BokehLine(line_dash=dash).line_dash


def _finite_or_none(v: float):
    return float(v) if v is not None and np.isfinite(v) else None


def _same(data: dict, s: Series) -> bool:
    old_x, old_y = np.asarray(data.get("x", ()), float), np.asarray(data.get("y", ()), float)
    return (old_x.shape == s.x.shape and old_y.shape == s.y.shape
            and np.array_equal(old_x, s.x, equal_nan=True)
            and np.array_equal(old_y, s.y, equal_nan=True))


class LiveFigure:
    """A pane showing ``chart_fn()`` that follows the parameters ``chart_fn`` depends on.

    ``chart_fn`` is a ``@param.depends`` method of the explorer returning a :class:`Chart`, or
    ``None`` to keep the last valid figure (e.g. while the settings are invalid).
    """

    def __init__(self, chart_fn: Callable[[], Chart | None], **pane_kwargs):
        self.chart_fn = chart_fn
        chart = chart_fn()
        self.structure = chart.structure() if chart is not None else None
        self.stale = chart is None  # nothing valid drawn yet: draw at the next valid step
        self.step = 0  # the parameter step whose chart is drawn (LiveFigures counts them)
        self.pane = pn.pane.Bokeh(figure(chart, live=True) if chart is not None else None,
                                  sizing_mode=_sizing(chart), **pane_kwargs)
        self.legend = pn.pane.HTML(legend_html(chart) if chart is not None else "",
                                   sizing_mode="stretch_width", margin=(0, 10, 0, 60))
        #: what the page shows: the legend above the plot
        self.view = pn.Column(self.legend, self.pane, sizing_mode="stretch_width")

    def draw(self, chart: Chart | None) -> None:
        """Draw ``chart``: in place when its structure is unchanged, else anew (None keeps
        the last valid figure and marks it stale)."""
        if chart is None:
            self.stale = True
            return
        self.stale = False
        legend = legend_html(chart)
        if self.legend.object != legend:
            self.legend.object = legend
        if self.pane.object is not None and chart.structure() == self.structure:
            update(self.pane.object, chart)
            if self.pane.object.document is not None and \
                    self.pane.object.document.session_context is None:
                pn.io.push_notebook(self.pane)  # a notebook: send the change over its comm
        else:
            self.structure = chart.structure()
            self.pane.object = figure(chart, live=True)


class LiveFigures:
    """The live figures of one explorer: one watcher, one held update per parameter step."""

    def __init__(self, owner: param.Parameterized):
        self.owner = owner
        self.figures: list[tuple[LiveFigure, frozenset]] = []
        self._watcher = None
        self._steps = itertools.count(1)  # next() is atomic: steps may run on several threads

    def add(self, chart_fn: Callable[[], Chart | None], **pane_kwargs) -> pn.Column:
        figure_ = LiveFigure(chart_fn, **pane_kwargs)
        deps = self.owner.param.method_dependencies(chart_fn.__name__)
        names = frozenset(d.name for d in deps if d.inst is self.owner)
        self.figures.append((figure_, names))
        if self._watcher is not None:
            self.owner.param.unwatch(self._watcher)
        every = sorted(set().union(*(n for _, n in self.figures)))
        self._watcher = self.owner.param.watch(self._step, every)
        return figure_.view

    def _step(self, *events) -> None:
        """Compute the charts the changed parameters touch, then draw them in one update."""
        changed = {e.name for e in events}
        due = [f for f, names in self.figures if names & changed or f.stale]
        step = next(self._steps)
        charts = [(f, f.chart_fn()) for f in due]
        # on the event loop when served (now when already on it, or without a server)
        pn.state.execute(partial(self._draw, step, charts))

    def _draw(self, step: int, charts: list) -> None:
        """Draw a step's charts, skipping any figure a later step has drawn already (two
        steps computed on two threads may arrive out of order)."""
        with pn.io.hold():
            for f, chart in charts:
                if f.step > step:
                    continue
                f.step = step
                f.draw(chart)
