"""Live figures that follow a slider by pushing columns into their Bokeh sources.

Why: a HoloViews ``DynamicMap`` re-runs its whole plotting pipeline on every update (element
construction, option lookup, range computation, glyph update), about 6 ms per plot plus 5 ms
per layer on this 2-core machine, and Panel sends each plot's update as its own message. A
page with four multi-curve plots that follow one slider then takes ~2.9x the time of a
one-curve app until every plot has changed (``benchmarks/dashboard_latency.py``).

A :class:`LiveFigure` renders its HoloViews overlay once per document (so the figure is the
same HoloViews object in a notebook and in ``panel serve``), records the rendered plot through
a HoloViews hook, and then, on every change of the parameters it depends on, writes only the
new numbers: each curve's ``(x, y)`` columns, each ``VLine``/``HLine`` position, the legend
(HTML above the plot) and the axis ranges (HoloViews' padding rule, kept while the data fills
them). The overlay's structure (which layers, in
which order) is fixed; anything that changes it belongs in a ``DynamicMap``.
"""

from __future__ import annotations

import functools
import html
import weakref
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass

import holoviews as hv
import numpy as np
import panel as pn
from holoviews.core.util import dimension_sanitizer


@dataclass(frozen=True)
class Line:
    """New data for one ``Curve`` or ``Scatter`` layer (``label=None`` keeps the old one)."""

    x: np.ndarray
    y: np.ndarray
    label: str | None = None


#: a layer's new data: a :class:`Line`, the position of a ``VLine``/``HLine``, or ``None``
#: (leave the layer as it is)
Layer = Line | float | None

_LINE_TYPES = (hv.Curve, hv.Scatter)
#: an axis is kept while the padded data span fills at least this fraction of it
KEEP_AXIS_FILL = 0.5
_MARK_TYPES = (hv.VLine, hv.HLine)


class LiveFigure:
    """An overlay drawn once by ``element()`` and updated in place from ``layers()``.

    ``element()`` returns the full styled ``hv.Overlay`` (first render, notebooks, tests);
    ``layers()`` returns one :data:`Layer` per overlay layer, in the same order, computed from
    the same numbers; it returns ``None`` to keep the last valid figure (e.g. while the
    settings are invalid). ``padding`` is the overlay's y padding (HoloViews' default 0.1).
    ``layers()`` is separate from ``element()`` because building the styled overlay costs
    5-8 ms per figure on this machine, more than the whole step's push; the generic test
    ``test_rendered_live_figures_equal_a_fresh_render_after_random_steps`` holds the two
    to the same numbers.
    """

    def __init__(self, element: Callable[[], hv.Overlay], layers: Callable[[], Sequence | None],
                 padding: float = 0.1):
        self.element, self.layers, self.padding = element, layers, padding
        self._plots: weakref.WeakSet = weakref.WeakSet()
        self.stale = False  # the last push was skipped (invalid settings): push again later
        self._keys: dict[int, list] = {}  # layer index -> [label, color, dash, marker]
        self._legend = pn.pane.HTML("", margin=(0, 10), sizing_mode="stretch_width")

    # ------------------------------------------------------------------ rendering
    def _register(self, plot, element) -> None:
        self._plots.add(plot)

    def panel(self, **kwargs) -> pn.Column:
        """The figure with its legend above it, as HTML; every document it is rendered into
        is kept live.

        The legend and the toolbar are not drawn by Bokeh: on every update Bokeh re-measures
        each legend entry's text and re-lays out the toolbar; on spurious_dpo's page of four
        figures each of the two cost about 0.1x of the trivial app's latency (Chromium)."""
        overlay = self.element()
        self._keys = {i: _legend_key(layer) for i, layer in enumerate(overlay)
                      if isinstance(layer, _LINE_TYPES) and layer.label}
        self._legend.object = _legend_html(self._keys)
        overlay = overlay.opts(hv.opts.Overlay(hooks=[self._register], show_legend=False,
                                               toolbar=None))
        return pn.Column(self._legend, pn.pane.HoloViews(overlay, **kwargs),
                         sizing_mode=kwargs.get("sizing_mode"))

    def plots(self) -> list:
        """The rendered HoloViews plots still attached to a document."""
        return [p for p in list(self._plots) if _document(p) is not None]

    def documents(self) -> set:
        """The live documents this figure is rendered into."""
        return {_document(p) for p in self.plots()}

    # ------------------------------------------------------------------ updating
    def push(self) -> int:
        """Write the current ``layers()`` into every rendered copy; returns how many."""
        plots = self.plots()
        if not plots:
            return 0
        layers = self.layers()
        self.stale = layers is None
        if layers is None:
            return 0
        self._relabel(layers)
        current = pn.state.curdoc
        for plot in plots:
            doc = _document(plot)
            if _ours(doc, current):
                self._apply(plot, layers)
                plot.push()  # a notebook's plot sends its changes over its comm (else no-op)
            else:  # another session's document: change it under that session's lock
                doc.add_next_tick_callback(functools.partial(self._apply, plot, layers))
        return len(plots)

    def _relabel(self, layers: Sequence) -> None:
        changed = False
        for i, key in self._keys.items():
            new = layers[i] if i < len(layers) else None
            if isinstance(new, Line) and new.label is not None and new.label != key[0]:
                key[0], changed = new.label, True
        if changed:
            self._legend.object = _legend_html(self._keys)

    def _apply(self, plot, layers: Sequence) -> None:
        subplots = list(plot.subplots.values())
        if len(subplots) != len(layers):
            raise ValueError(f"the figure has {len(subplots)} layers, layers() gave "
                             f"{len(layers)}")
        ys, xs = [], []
        for sub, new in zip(subplots, layers, strict=True):
            if new is None:
                continue
            frame = sub.current_frame
            if isinstance(frame, _LINE_TYPES):
                if not isinstance(new, Line):
                    raise TypeError(f"layer {frame} needs a Line, got {new!r}")
                x, y = np.asarray(new.x, dtype=float), np.asarray(new.y, dtype=float)
                source = sub.handles["source"]
                xk, yk = _column(source, frame.kdims[0]), _column(source, frame.vdims[0])
                if len(source.data) != 2:
                    raise ValueError(f"unexpected columns {sorted(source.data)} in {frame}")
                if not (_same(source.data[xk], x) and _same(source.data[yk], y)):
                    source.data = {xk: x, yk: y}  # unchanged lines cost the browser nothing
                xs.append(x)
                ys.append(y)
            elif isinstance(frame, _MARK_TYPES):
                if sub.handles["glyph"].location != float(new):
                    sub.handles["glyph"].location = float(new)
            else:
                raise TypeError(f"LiveFigure cannot update a {type(frame).__name__} layer")
        if xs:
            _set_range(plot.handles["x_range"], np.concatenate(xs), 0.0)
            _set_range(plot.handles["y_range"], np.concatenate(ys), self.padding)


def _ours(doc, current) -> bool:
    """May this callback change ``doc`` directly? Yes outside a server (tests, notebooks) and
    for the session whose event is being handled; other sessions need their own lock."""
    return current is None or doc is current or doc.session_context is None


def _document(plot):
    state = plot.handles.get("plot")
    return None if state is None else state.document


def _same(old, new: np.ndarray) -> bool:
    """Equal up to float round-off (a recomputed constant curve is not a change)."""
    old = np.asarray(old, dtype=float)
    return old.shape == new.shape and np.allclose(old, new, rtol=1e-12, atol=1e-12,
                                                  equal_nan=True)


def _column(source, dim) -> str:
    for name in (dim.name, dimension_sanitizer(dim.name)):
        if name in source.data:
            return name
    raise ValueError(f"no column for {dim.name!r} in {sorted(source.data)}")


def _set_range(rng, values: np.ndarray, padding: float) -> None:
    """Fit the axis to the data with HoloViews' padding, but keep it while the data still
    fills at least half of it: small slider steps then move the curves, not the axes (the
    eye follows the change, and the browser skips re-laying out the tick labels)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return
    lo, hi = float(finite.min()), float(finite.max())
    if lo == hi:  # HoloViews' rule for a flat line: one unit around it
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * padding
    lo, hi = lo - pad, hi + pad
    start, end = rng.start, rng.end
    if (isinstance(start, int | float) and isinstance(end, int | float) and start <= lo
            and hi <= end and (hi - lo) >= KEEP_AXIS_FILL * (end - start)):
        return
    rng.update(start=lo, end=hi)


def _legend_key(layer) -> list:
    style = hv.Store.lookup_options("bokeh", layer, "style").kwargs
    color = style.get("color")
    if not isinstance(color, str):  # a Cycle would give the legend the wrong swatch
        raise ValueError(f"LiveFigure: give the line layer {layer.label!r} an explicit color")
    return [layer.label, color, style.get("line_dash", "solid"), isinstance(layer, hv.Scatter)]


def _legend_html(keys: dict[int, list]) -> str:
    items = []
    for label, color, dash, marker in keys.values():
        swatch = (f'<span style="color:{color}">●</span>' if marker else
                  f'<span style="display:inline-block;width:24px;vertical-align:middle;'
                  f'border-top:2px {"solid" if dash == "solid" else "dashed"} {color}"></span>')
        items.append(f'<span style="white-space:nowrap;margin-right:14px">{swatch} '
                     f'{html.escape(label)}</span>')
    return '<div style="font-size:12px;line-height:1.6">' + " ".join(items) + "</div>"


class LiveFigures:
    """The live figures of one explorer, each following some of its parameters.

    One watcher serves them all: a parameter step updates the figures that depend on it
    inside one document hold, so the browser gets the whole step as one message and draws
    it once (unheld, every property change is a message of its own and a redraw).
    """

    def __init__(self, parameterized):
        self._owner = parameterized
        self._figures: list[tuple[LiveFigure, frozenset]] = []
        self._watcher = None

    def add(self, element: Callable[[], hv.Overlay], layers: Callable[[], Sequence | None],
            **pane_kwargs) -> pn.Column:
        """A new live figure; returns its pane. It follows the parameters ``element`` (a
        ``@param.depends`` method of the owner) depends on."""
        names = element._dinfo["dependencies"]
        figure = LiveFigure(element, layers)
        self._figures.append((figure, frozenset(names)))
        if self._watcher is not None:
            self._owner.param.unwatch(self._watcher)
        every = sorted(set().union(*(n for _, n in self._figures)))
        self._watcher = self._owner.param.watch(self._step, every)
        return figure.panel(**pane_kwargs)

    @property
    def figures(self) -> list[LiveFigure]:
        return [f for f, _ in self._figures]

    def _step(self, *events) -> None:
        changed = {e.name for e in events}
        # a figure skipped while the settings were invalid catches up on the next step,
        # whichever parameter made them valid again
        due = [f for f, names in self._figures if names & changed or f.stale]
        docs = set().union(*(f.documents() for f in due)) if due else set()
        current = pn.state.curdoc
        with ExitStack() as stack:
            for doc in docs:
                if _ours(doc, current):
                    stack.enter_context(pn.io.hold(doc))
            for figure in due:
                figure.push()
