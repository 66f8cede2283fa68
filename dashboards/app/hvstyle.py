"""The figure standard for the HoloViews figures, set once as option defaults.

The live figures (:mod:`icml26.dashboards.app.live`) pad their axes 5% beyond the data and pick
their tickers by rule; the HoloViews figures (heatmaps, error bars, overlays) get the same
padding here, as Bokeh-backend option defaults, so no point sits on a frame corner and no error
bar is cut at the frame, in every app and notebook at once; and their log axes get the live
figures' tick rule (three labels at least, none piled up:
:func:`~icml26.dashboards.app.axes.log_ticker`) through a plot hook. An element's own ``.opts``
still win (defaults only fill what a figure leaves unset). The same hook moves a legend that
HoloViews put inside the frame (``legend_position="top_left"`` and the like) to the right of
it, so a legend never covers data. :func:`apply` runs when the page module is
imported (every app and notebook imports it) and is idempotent.
"""

from __future__ import annotations

import holoviews as hv
from bokeh.models import FixedTicker, Legend, LogAxis

from icml26.dashboards.app.axes import log_ticker, plain_labels

PADDING = 0.05  # the live figures' PAD
OURS = "icml26-log-ticker"  # the tag of the tickers figure_standard sets
PADDED = ("Curve", "Scatter", "Points", "ErrorBars", "Spread", "Area")


def figure_standard(plot, element) -> None:
    """Plot hook: each log axis of the drawn figure gets ``log_ticker`` for its range (with
    plain number labels: 2e-05, 0.2, 500), unless the figure set its own ticks (``xticks``,
    ``yticks``: a FixedTicker this hook did not make; gsrq's bits per element), and a legend
    inside the frame moves to its right."""
    fig = plot.state
    for axes, rng in ((getattr(fig, "xaxis", []), getattr(fig, "x_range", None)),
                      (getattr(fig, "yaxis", []), getattr(fig, "y_range", None))):
        start, end = getattr(rng, "start", None), getattr(rng, "end", None)
        if start is None or end is None:
            continue
        chosen = log_ticker(min(start, end), max(start, end))
        if chosen is not None:
            chosen.tags = [OURS]
        for axis in axes:
            own = isinstance(axis.ticker, FixedTicker) and OURS not in axis.ticker.tags
            if isinstance(axis, LogAxis) and chosen is not None and not own:
                axis.ticker = chosen
                if isinstance(chosen, FixedTicker):
                    axis.formatter = plain_labels()
    for legend in [m for m in getattr(fig, "center", []) if isinstance(m, Legend)]:
        fig.center.remove(legend)
        legend.location = "top_left"
        fig.add_layout(legend, "right")


def apply() -> None:
    """Set the defaults on the Bokeh backend (loaded here if no ``hv.extension`` ran yet; a
    later ``hv.extension("bokeh")`` keeps them)."""
    import holoviews.plotting.bokeh  # noqa: F401  (registers the Bokeh plotting classes)

    hv.Store.set_current_backend("bokeh")  # also builds hv.opts' entries for the backend
    hv.opts.defaults(*(getattr(hv.opts, name)(padding=PADDING, hooks=[figure_standard])
                       for name in PADDED), hv.opts.Overlay(hooks=[figure_standard]),
                     backend="bokeh")


def cell_labels(cells, kdims, clim: tuple[float, float], diverging: bool, digits: int = 2,
                marks=None) -> hv.Labels:
    """The value labels of a heatmap, readable on every cell: ``cells`` are ``(x, y, value)``;
    the text is white where the colormap is dark (the ends of a diverging map, the top of a
    sequential one over ``clim``) and black elsewhere; ``-0.00`` is written ``0.00``; ``marks``
    maps ``(x, y)`` to a suffix (a star for a chosen cell)."""
    lo, hi = clim
    rows = []
    for x, y, v in cells:
        t = (v - lo) / (hi - lo) if hi > lo else 0.5
        dark = abs(2 * t - 1) > 0.55 if diverging else t > 0.55
        text = f"{v:.{digits}f}"
        if float(text) == 0:
            text = f"{0:.{digits}f}"
        rows.append((x, y, text + (marks or {}).get((x, y), ""), "white" if dark else "black"))
    return hv.Labels(rows, kdims, ["text", "ink"]).opts(text_color="ink", text_font_size="9pt")
