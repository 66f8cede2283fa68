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

Axes are ``Range1d`` set here, in the same held message as the data: the extent of the data
plus 5% (in log space on a log axis), kept while the data stays inside and fills at least half
of it, refitted otherwise. So data never leaves the plot, small steps move the curves and not
the axes, and the browser draws a step once. (``DataRange1d``, refitted by the browser, cost a
data-bounds pass and a re-layout per changed source: 1.3-1.9x the trivial app's step.)
The legend sits outside the frame (above it, as HTML), so it never covers data.

Ticks follow one rule for every figure (:func:`ticker`, chosen when the figure is drawn): an axis
whose data are whole numbers (layers, hops, steps, indices) gets ticks at whole numbers only,
never 1.5; a log axis spanning under three decades gets labelled ticks at the 1-2-5 values (or
every integer mantissa, or round linear values on a very short span: :func:`log_ticker`), so at
least three are labelled. A frame is never lower than MIN_HEIGHT, so its tick labels cannot pile
up.

The same function draws the figure in the notebook (:func:`figure`), in the served app and in
the tests; :func:`chart_ranges` gives the data extent the browser test checks against.
"""

from __future__ import annotations

import html
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import panel as pn
import param
from bokeh.core.properties import value
from bokeh.models import (
    AdaptiveTicker,
    ColumnDataSource,
    FixedTicker,
    Legend,
    LegendItem,
    LogTicker,
    LogTickFormatter,
    PrintfTickFormatter,
    Range1d,
    Span,
)
from bokeh.plotting import figure as bokeh_figure

KINDS = ("line", "scatter", "vline", "hline")


@dataclass(frozen=True)
class Series:
    """One layer: a line or scatter of ``(x, y)``, or a vertical/horizontal mark at ``at``.

    ``label=None`` leaves the layer out of the legend. Colours are explicit (no cycle), so a
    layer keeps its colour when others come and go.
    """

    color: str
    x: Sequence[float] | np.ndarray = ()
    y: Sequence[float] | np.ndarray = ()
    label: str | None = None
    kind: str = "line"
    dash: str = "solid"
    at: float = math.nan  # position of a vline / hline
    width: float = 2.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind in ("line", "scatter"):
            x = np.asarray(self.x, dtype=float)
            y = np.asarray(self.y, dtype=float)
            if x.shape != y.shape or x.ndim != 1:
                raise ValueError(f"series {self.label!r}: x and y must be 1-D of one length, "
                                 f"got {x.shape} and {y.shape}")
            object.__setattr__(self, "x", x)
            object.__setattr__(self, "y", y)

    def columns(self) -> dict:
        return {"x": self.x, "y": self.y}


@dataclass(frozen=True)
class Chart:
    """Everything a live figure shows: axis names with units, a short title, the layers."""

    title: str
    x_label: str
    y_label: str
    series: Sequence[Series] = field(default_factory=tuple)
    x_log: bool = False
    y_log: bool = False
    height: int = 300

    def __post_init__(self):
        for name in ("x_label", "y_label"):
            if getattr(self, name).strip().lower() in ("", "x", "y"):
                raise ValueError(f"{name} must name the quantity, got {getattr(self, name)!r}")
        object.__setattr__(self, "series", tuple(self.series))

    def structure(self) -> tuple:
        """What fixes the Bokeh models: a change of it draws the figure anew."""
        return (self.x_log, self.y_log, self.height,
                tuple((s.kind, s.color, s.dash, s.label is None) for s in self.series))


def chart_ranges(chart: Chart) -> tuple[tuple[float, float], tuple[float, float]] | None:
    """The finite data extent ``((x0, x1), (y0, y1))`` of the chart's lines and points."""
    xs = [s.x for s in chart.series if s.kind in ("line", "scatter") and len(s.x)]
    ys = [s.y for s in chart.series if s.kind in ("line", "scatter") and len(s.y)]
    if not xs:
        return None
    x, y = np.concatenate(xs), np.concatenate(ys)
    ok = np.isfinite(x) & np.isfinite(y)
    if not ok.any():
        return None
    return (float(x[ok].min()), float(x[ok].max())), (float(y[ok].min()), float(y[ok].max()))


def figure(chart: Chart, live: bool = False):
    """A new Bokeh figure drawing ``chart`` (one owned source per line/scatter layer).

    ``live=True``: no toolbar and no Bokeh legend (the live figure shows
    :func:`legend_html` above the plot). Bokeh lays its toolbar out and measures every legend
    label again on each repaint: with them a slider step of a four-figure app took 1.35-1.8x
    the trivial app's, without them 1.1-1.25x (benchmarks/dashboard_latency.csv). A live
    figure follows the sliders; the notebook's static copies (:func:`show`) keep zoom, save
    and a legend that hides a line on click."""
    fig = bokeh_figure(title=chart.title, x_axis_label=chart.x_label,
                       y_axis_label=chart.y_label, height=max(chart.height, MIN_HEIGHT),
                       sizing_mode="stretch_width", min_width=300,
                       x_axis_type="log" if chart.x_log else "linear",
                       y_axis_type="log" if chart.y_log else "linear",
                       x_range=Range1d(*_fitted(chart, 0)), y_range=Range1d(*_fitted(chart, 1)),
                       tools="" if live else "pan,wheel_zoom,box_zoom,reset,save",
                       toolbar_location=None if live else "right",
                       output_backend="canvas")
    fig.title.text_font_size = "13px"
    for axis, bokeh_axis in ((0, fig.xaxis), (1, fig.yaxis)):
        chosen = ticker(chart, axis)
        if chosen is not None:
            bokeh_axis.ticker = chosen
            if isinstance(chosen, FixedTicker):  # 2e-05, 0.2, 500 (not 2.000e-5)
                bokeh_axis.formatter = plain_labels()
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
                                line_dash=s.dash, line_width=s.width)
        else:
            renderer = fig.scatter("x", "y", source=source, color=s.color, size=7)
        if s.label is not None:
            items.append(LegendItem(label=value(s.label), renderers=[renderer]))
    if items and not live:
        fig.add_layout(Legend(items=items, orientation="horizontal", click_policy="hide",
                              label_text_font_size="12px", spacing=12, padding=2,
                              margin=2, border_line_alpha=0), "above")
    return fig


def plain_labels() -> PrintfTickFormatter:
    """Tick labels as plain numbers (2e-05, 0.2, 500), not 2.000e-5 (a new model per axis)."""
    return PrintfTickFormatter(format="%g")


MIN_HEIGHT = 220  # px: below it a frame's tick labels and title crowd each other


def integer_valued(chart: Chart, axis: int) -> bool:
    """Whether every finite value of ``chart``'s lines and points on ``axis`` (0 = x) is a whole
    number, over a span of at least 1 (a count, a layer, a step): an axis that wants integer
    ticks."""
    vals = [s.y if axis else s.x for s in chart.series if s.kind in ("line", "scatter")]
    v = np.concatenate(vals) if vals else np.empty(0)
    v = v[np.isfinite(v)]
    return bool(v.size) and bool(np.all(v == np.round(v))) and float(v.max() - v.min()) >= 1


def log_ticker(lo: float, hi: float):
    """The ticker of a log axis showing ``lo..hi``: Bokeh's decades over three decades or more;
    else the 1-2-5 values inside the range (every integer mantissa where 1-2-5 gives under
    three); round linear values where even those are under three (a span under ~1.5x). (Bokeh's
    ``LogTicker`` falls back to evenly spaced linear ticks on an axis of one or two decades,
    which pile up at its top end in log space: 0.6/0.7/0.8.) A live figure sets it anew when
    it refits a log axis (:func:`update`); the HoloViews figures get it through a plot hook
    (:mod:`icml26.dashboards.app.hvstyle`)."""
    if not (0 < lo < hi) or math.log10(hi / lo) >= 3:
        return None
    for mantissas in ((1, 2, 5), tuple(range(1, 10))):
        ticks = [m * 10.0 ** k for k in range(math.floor(math.log10(lo)),
                                               math.ceil(math.log10(hi)) + 1)
                 for m in mantissas if lo <= m * 10.0 ** k <= hi]
        if len(ticks) >= 3:
            return FixedTicker(ticks=ticks, minor_ticks=[])
    return AdaptiveTicker(num_minor_ticks=0)


def ticker(chart: Chart, axis: int):
    """The figure standard's ticker for ``axis`` (0 = x), or None for Bokeh's default: whole
    numbers only on an integer-valued linear axis; on a log axis, :func:`log_ticker`."""
    if chart.y_log if axis else chart.x_log:
        return log_ticker(*_fitted(chart, axis))
    if integer_valued(chart, axis):
        return AdaptiveTicker(min_interval=1.0, num_minor_ticks=0)
    return None


def legend_html(chart: Chart) -> str:
    """The legend of a live figure as HTML: a swatch (line, dash or dot) and the label of
    every labelled line or scatter, in order."""
    items = []
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
    return f'<div style="font-size:12px;line-height:1.6">{"".join(items)}</div>' if items else ""


def show(chart: Chart) -> pn.pane.Bokeh:
    """A pane drawing ``chart`` once (the notebook's static copy of a live figure)."""
    return pn.pane.Bokeh(figure(chart), sizing_mode="stretch_width")


def update(fig, chart: Chart) -> None:
    """Write ``chart``'s numbers into ``fig`` (drawn from a chart of the same structure)."""
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
    for span, s in zip(marks, mark_series):
        location = _finite_or_none(s.at)
        if span.location != location:
            span.location = location
    if legends:
        for item, label in zip(legends[0].items, labels):
            if getattr(item.label, "value", None) != label:
                item.label = value(label)  # a bare string would name a data column
    if fig.title.text != chart.title:
        fig.title.text = chart.title
    for axis, rng in ((0, fig.x_range), (1, fig.y_range)):
        start, end = _kept_or_fitted(chart, axis, (rng.start, rng.end))
        if (rng.start, rng.end) != (start, end):
            rng.update(start=start, end=end)
            if chart.y_log if axis else chart.x_log:  # its ticks were fixed for the old range
                chosen = ticker(chart, axis)
                bokeh_axis = (fig.yaxis if axis else fig.xaxis)[0]
                bokeh_axis.ticker = chosen or LogTicker()
                bokeh_axis.formatter = (plain_labels() if isinstance(chosen, FixedTicker)
                                        else LogTickFormatter())


#: padding around the data extent, as a share of it
PAD = 0.05
#: a kept axis must be at least this full of data (else it is refitted, zooming in)
MIN_FILL = 0.5


def _extent(chart: Chart, axis: int) -> tuple[float, float] | None:
    """Finite (positive on a log axis) extent of the chart's points along ``axis``, in the
    axis' own space (log10 on a log axis)."""
    log = chart.y_log if axis else chart.x_log
    pts = [(s.x, s.y) for s in chart.series if s.kind in ("line", "scatter") and len(s.x)]
    if not pts:
        return None
    x, y = np.concatenate([p[0] for p in pts]), np.concatenate([p[1] for p in pts])
    ok = np.isfinite(x) & np.isfinite(y)
    if chart.x_log:
        ok &= x > 0
    if chart.y_log:
        ok &= y > 0
    v = (y if axis else x)[ok]
    if not len(v):
        return None
    v = np.log10(v) if log else v
    return float(v.min()), float(v.max())


def _fitted(chart: Chart, axis: int) -> tuple[float, float]:
    """``(start, end)`` of an axis fitted to the data, padded by PAD of its extent."""
    log = chart.y_log if axis else chart.x_log
    ext = _extent(chart, axis)
    if ext is None:
        lo, hi = (0.0, 1.0)
    else:
        lo, hi = ext
        pad = PAD * (hi - lo) if hi > lo else max(0.5 * abs(lo), 0.5) * (0.2 if log else 1.0)
        lo, hi = lo - pad, hi + pad
    return (10 ** lo, 10 ** hi) if log else (lo, hi)


def axes_hold_data(fig, chart: Chart) -> bool:
    """Whether ``fig``'s axes show every finite point of ``chart`` (positive ones on a log
    axis): what the browser check asks of a painted plot, asked of the model."""
    for axis, rng in ((0, fig.x_range), (1, fig.y_range)):
        ext = _extent(chart, axis)
        if ext is None:
            continue
        log = chart.y_log if axis else chart.x_log
        lo, hi = (10 ** ext[0], 10 ** ext[1]) if log else ext
        if rng.start is None or rng.end is None or not (rng.start <= lo and hi <= rng.end):
            return False
    return True


def _kept_or_fitted(chart: Chart, axis: int, current: tuple) -> tuple[float, float]:
    """The current range when the data lies inside it and fills at least MIN_FILL of it."""
    log = chart.y_log if axis else chart.x_log
    ext = _extent(chart, axis)
    start, end = current
    if ext is None or start is None or end is None or not end > start or (log and start <= 0):
        return _fitted(chart, axis)
    lo, hi = (np.log10(start), np.log10(end)) if log else (start, end)
    inside = lo <= ext[0] and ext[1] <= hi
    if inside and (ext[1] - ext[0]) >= MIN_FILL * (hi - lo):
        return current
    return _fitted(chart, axis)


def _finite_or_none(v: float):
    return float(v) if v is not None and math.isfinite(v) else None


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
                                  sizing_mode="stretch_width", **pane_kwargs)
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
