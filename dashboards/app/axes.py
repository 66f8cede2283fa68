"""The axis rules of the figure standard, for every live figure (:mod:`.live`) and, through a
plot hook, the HoloViews figures (:mod:`.hvstyle`).

Ranges are the extent of the data plus PAD (in log space on a log axis), kept while the data
stays inside and fills at least MIN_FILL of them, refitted otherwise. So data never leaves the
plot and never sits on the frame's edge, and small steps move the curves and not the axes.

Ticks follow one rule (:func:`ticker`, chosen when the figure is drawn): a categorical axis
(``Chart.x_names``) has one tick per category, labelled by its name (tilted when the names
would not fit side by side); an axis whose data are whole numbers (layers, hops, steps) gets
ticks at whole numbers only, never 1.5; a log axis spanning under three decades gets labelled
ticks at the 1-2-5 values (or every integer mantissa, or round linear values on a very short
span: :func:`log_ticker`), so at least three are labelled. A frame is never lower than
MIN_HEIGHT, so its tick labels cannot pile up.

Geometry (``Chart.geometry``: positions in a plane) gets equal aspect: a frame of fixed size
whose width / height follows the data's (within 3:4 and 2:1), and ranges widened on one axis so
one unit is as long on both (:func:`frame_size`, :func:`fitted_ranges`); a circle is round.
"""

from __future__ import annotations

import math

import numpy as np
from bokeh.models import (
    AdaptiveTicker,
    BasicTickFormatter,
    CustomJSTickFormatter,
    FixedTicker,
    LogTicker,
    LogTickFormatter,
)

from icml26.dashboards.app.chart import Chart

MIN_HEIGHT = 220  # px: below it a frame's tick labels and title crowd each other
#: padding around the data extent, as a share of it
PAD = 0.05
#: a kept axis must be at least this full of data (else it is refitted, zooming in)
MIN_FILL = 0.5
#: a geometry frame: its width / height stays within these (the data's own ratio inside)
GEOMETRY_RATIO = (0.75, 2.0)
#: px (left, top, right, bottom) around a geometry frame: room for its axes and title, so the
#: frame is exactly the figure less these (Bokeh grows a border only past its minimum)
GEOMETRY_BORDERS = (70, 35, 15, 60)
#: px a category name takes per character (12 px sans-serif), to decide on tilting
CHAR_PX = 7.0
#: the narrowest frame a categorical x axis is laid out for (the figure's min_width less axes)
MIN_FRAME_WIDTH = 240


#: a tick as a short plain number: 0.2, 500, 20000; powers past 1e5 or under 1e-3 as 2e7, 5e-6
PLAIN_JS = """
const a = Math.abs(tick);
if (a !== 0 && (a >= 1e5 || a < 1e-3)) {
  return tick.toExponential().replace('e+', 'e');
}
return String(Number(tick.toPrecision(6)));
"""


def plain_labels() -> CustomJSTickFormatter:
    """Tick labels as short plain numbers (5e-6, 0.2, 500, 2e7), not 2.000e-5 or 20000000
    (a new model per axis)."""
    return CustomJSTickFormatter(code=PLAIN_JS)


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
    it refits a log axis (:func:`style_axis`); the HoloViews figures get it through a plot hook
    (:mod:`icml26.dashboards.app.hvstyle`)."""
    if not (0 < lo < hi) or math.log10(hi / lo) >= 3:
        return None
    for mantissas in ((1, 2, 5), tuple(range(1, 10))):
        # 5e-06, not 5 * 10.0 ** -6 = 4.9999999999999996e-06 (printed so by the browser)
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        ticks = [t for k in decades for m in mantissas
                 if lo <= (t := float(f"{m}e{k}")) <= hi]
        if len(ticks) >= 3:
            return FixedTicker(ticks=ticks, minor_ticks=[])
    return AdaptiveTicker(num_minor_ticks=0)


def ticker(chart: Chart, axis: int, rng: tuple[float, float] | None = None):
    """The figure standard's ticker for ``axis`` (0 = x) showing ``rng`` (default: the fitted
    range), or None for Bokeh's default: one tick per category on a categorical axis; whole
    numbers only on an integer-valued linear axis; on a log axis, :func:`log_ticker`."""
    names = chart.names(axis)
    if names:
        return FixedTicker(ticks=[p for p, _ in names], minor_ticks=[])
    if chart.log(axis):
        lo, hi = rng if rng is not None else fitted_ranges(chart)[axis]
        return log_ticker(min(lo, hi), max(lo, hi))
    if integer_valued(chart, axis):
        return AdaptiveTicker(min_interval=1.0, num_minor_ticks=0)
    return None


def tilted(chart: Chart, axis: int) -> bool:
    """Whether the category names of x ``axis`` would not fit side by side in a narrow frame."""
    names = chart.names(axis)
    if axis or not names:
        return False
    widest = max(len(n) for _, n in names) * CHAR_PX + 8
    return widest * len(names) > MIN_FRAME_WIDTH


def style_axis(bokeh_axis, chart: Chart, axis: int, rng: tuple[float, float]) -> None:
    """Give a Bokeh axis the standard's ticker, labels and label orientation for ``rng``."""
    chosen = ticker(chart, axis, rng)
    names = chart.names(axis)
    if chosen is None and chart.log(axis):
        chosen = LogTicker()
    if chosen is not None:
        bokeh_axis.ticker = chosen
    if names:
        bokeh_axis.major_label_overrides = {(int(p) if p == int(p) else p): n
                                            for p, n in names}
        if tilted(chart, axis):
            bokeh_axis.major_label_orientation = math.pi / 4
    elif isinstance(chosen, FixedTicker):  # 2e-05, 0.2, 500 (not 2.000e-5)
        bokeh_axis.formatter = plain_labels()
    elif chart.log(axis):
        bokeh_axis.formatter = LogTickFormatter()
    else:  # 150000, not Bokeh's 1.500e+5 from 1e5 on (panda's sampled transitions)
        bokeh_axis.formatter = BasicTickFormatter(power_limit_high=7)


# ---------------------------------------------------------------------- ranges
def extent(chart: Chart, axis: int) -> tuple[float, float] | None:
    """Finite (positive on a log axis) extent of the chart's points along ``axis``, in the
    axis' own space (log10 on a log axis); a categorical axis spans all its categories."""
    log = chart.log(axis)
    pts = [(s.x, s.y) for s in chart.series if s.kind in ("line", "scatter") and len(s.x)]
    names = [p for p, _ in chart.names(axis)]
    if not pts and not names:
        return None
    x = np.concatenate([p[0] for p in pts]) if pts else np.empty(0)
    y = np.concatenate([p[1] for p in pts]) if pts else np.empty(0)
    ok = np.isfinite(x) & np.isfinite(y)
    if chart.x_log:
        ok &= x > 0
    if chart.y_log:
        ok &= y > 0
    v = np.concatenate([(y if axis else x)[ok], names])
    if not len(v):
        return None
    v = np.log10(v) if log else v
    return float(v.min()), float(v.max())


def _fitted(chart: Chart, axis: int) -> tuple[float, float]:
    """``(start, end)`` of an axis fitted to the data, padded by PAD of its extent (half a
    category on a categorical axis)."""
    log = chart.log(axis)
    ext = extent(chart, axis)
    if ext is None:
        lo, hi = (0.0, 1.0)
    else:
        lo, hi = ext
        pad = PAD * (hi - lo) if hi > lo else max(0.5 * abs(lo), 0.5) * (0.2 if log else 1.0)
        if chart.names(axis):
            pad = max(pad, 0.5)
        lo, hi = lo - pad, hi + pad
    return (10 ** lo, 10 ** hi) if log else (lo, hi)


def frame_size(chart: Chart) -> tuple[int, int]:
    """``(width, height)`` in px of a geometry chart's frame: its height from the chart's, its
    width following the data's width / height within GEOMETRY_RATIO."""
    height = max(chart.height, MIN_HEIGHT) - GEOMETRY_BORDERS[1] - GEOMETRY_BORDERS[3]
    (x0, x1), (y0, y1) = _fitted(chart, 0), _fitted(chart, 1)
    ratio = (x1 - x0) / (y1 - y0) if y1 > y0 else 1.0
    return round(height * min(max(ratio, GEOMETRY_RATIO[0]), GEOMETRY_RATIO[1])), height


def _equal_aspect(ranges, frame: tuple[float, float]):
    """Widen one of ``((x0, x1), (y0, y1))`` about its centre so a unit is as long on both
    axes of a ``frame`` of ``(width, height)`` px."""
    (x0, x1), (y0, y1) = ranges
    scale = max((x1 - x0) / frame[0], (y1 - y0) / frame[1])  # data units per px
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    hw, hh = scale * frame[0] / 2, scale * frame[1] / 2
    return (cx - hw, cx + hw), (cy - hh, cy + hh)


def fitted_ranges(chart: Chart, frame: tuple[float, float] | None = None):
    """``((x0, x1), (y0, y1))`` fitted to the data; of equal aspect on a geometry chart's
    ``frame`` (default :func:`frame_size`)."""
    ranges = (_fitted(chart, 0), _fitted(chart, 1))
    if chart.geometry:
        return _equal_aspect(ranges, frame or frame_size(chart))
    return ranges


def kept_or_fitted(chart: Chart, current, frame: tuple[float, float] | None = None):
    """The ranges to show ``chart`` on axes now showing ``current`` (``((x0, x1), (y0, y1))``):
    an axis keeps its range while the data lies inside and fills at least MIN_FILL of it; a
    geometry chart keeps or refits both axes together, keeping its aspect."""
    fitted = fitted_ranges(chart, frame)
    keep = [_keeps(chart, axis, current[axis], fitted[axis]) for axis in (0, 1)]
    if chart.geometry:
        return tuple(current) if all(keep) else fitted
    return tuple(current[a] if keep[a] else fitted[a] for a in (0, 1))


def _keeps(chart: Chart, axis: int, current, fitted) -> bool:
    log = chart.log(axis)
    ext = extent(chart, axis)
    start, end = current
    if ext is None or start is None or end is None or not end > start or (log and start <= 0):
        return False
    lo, hi = (np.log10(start), np.log10(end)) if log else (start, end)
    # the data's extent must fill MIN_FILL (geometry: the equal-aspect fit, which may not)
    span = (fitted[1] - fitted[0]) if chart.geometry else (ext[1] - ext[0])
    return bool(lo <= ext[0] and ext[1] <= hi and span >= MIN_FILL * (hi - lo))


def axes_hold_data(fig, chart: Chart) -> bool:
    """Whether ``fig``'s axes show every finite point of ``chart`` (positive ones on a log
    axis): what the browser check asks of a painted plot, asked of the model."""
    for axis, rng in ((0, fig.x_range), (1, fig.y_range)):
        ext = extent(chart, axis)
        if ext is None:
            continue
        lo, hi = (10 ** ext[0], 10 ** ext[1]) if chart.log(axis) else ext
        if rng.start is None or rng.end is None or not (rng.start <= lo and hi <= rng.end):
            return False
    return True
