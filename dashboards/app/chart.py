"""What a live figure shows, as numbers and labels: :class:`Series` (one layer) and
:class:`Chart` (axis names, title, layers and what the figure standard needs to know about the
axes: log, named categories, geometry). No plotting objects: :mod:`.live` draws a Chart and
:mod:`.axes` chooses its ranges and tickers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

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


def _names(names) -> tuple[tuple[float, str], ...]:
    """``{position: name}`` or a sequence of names (at 0, 1, ...) as sorted pairs."""
    if isinstance(names, Mapping):
        pairs = names.items()
    elif names and isinstance(names[0], tuple):
        pairs = names
    else:
        pairs = enumerate(names)
    return tuple(sorted((float(k), str(v)) for k, v in pairs))


@dataclass(frozen=True)
class Chart:
    """Everything a live figure shows: axis names with units, a short title, the layers.

    ``x_names`` / ``y_names``: a categorical axis, its categories drawn at numeric positions
    and labelled by name (``{0: "softmax", 1: "layernorm"}``, or a list of names at 0, 1, ...),
    never "index, see caption". ``geometry=True``: the axes share one unit (positions in a
    plane), so the figure has equal aspect and a circle is drawn round.
    """

    title: str
    x_label: str
    y_label: str
    series: Sequence[Series] = field(default_factory=tuple)
    x_log: bool = False
    y_log: bool = False
    height: int = 300
    x_names: Mapping | Sequence = ()
    y_names: Mapping | Sequence = ()
    geometry: bool = False

    def __post_init__(self):
        for name in ("x_label", "y_label"):
            if getattr(self, name).strip().lower() in ("", "x", "y"):
                raise ValueError(f"{name} must name the quantity, got {getattr(self, name)!r}")
        object.__setattr__(self, "series", tuple(self.series))
        for name in ("x_names", "y_names"):
            object.__setattr__(self, name, _names(getattr(self, name)))
        if self.geometry and (self.x_log or self.y_log):
            raise ValueError("a geometry chart has linear axes of one unit")

    def structure(self) -> tuple:
        """What fixes the Bokeh models: a change of it draws the figure anew."""
        return (self.x_log, self.y_log, self.height, self.x_names, self.y_names, self.geometry,
                tuple((s.kind, s.color, s.dash, s.label is None) for s in self.series))

    def log(self, axis: int) -> bool:
        return self.y_log if axis else self.x_log

    def names(self, axis: int) -> tuple[tuple[float, str], ...]:
        return self.y_names if axis else self.x_names


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


#: dashes given, in turn, to a solid line that coincides with one drawn before it
COINCIDING_DASHES = ("dashed", "dotted", "dotdash", "dashdot")
#: distance, in shares of the chart's x and y extents, within which a line lies on another
#: (3-6 px in the suite's 150-300 px frames, less than a wide line and its neighbour)
COINCIDE_TOL = 2e-2


def _points(s: Series, log: bool) -> np.ndarray:
    """A line's finite points (n, 2), y in decades on a log axis."""
    y = np.log10(np.where(s.y > 0, s.y, np.nan)) if log else s.y
    pts = np.column_stack([s.x, y])
    return pts[np.isfinite(pts).all(axis=1)]


def _covers(over: np.ndarray, under: np.ndarray, scale: np.ndarray, tol: float) -> bool:
    """Whether every point of polyline ``under`` lies within ``tol`` (in shares of the
    chart's extents ``scale``) of polyline ``over``: drawn on top, ``over`` hides it."""
    if len(under) < 2 or len(over) < 2:
        return False
    a, b = over[:-1] / scale, over[1:] / scale
    p = under / scale
    # cheap first (a slider step redraws every live chart): a line outside the other's
    # bounding box, widened by tol, cannot lie on it
    lo, hi = np.minimum(a, b).min(axis=0) - tol, np.maximum(a, b).max(axis=0) + tol
    if np.any(p.min(axis=0) < lo) or np.any(p.max(axis=0) > hi):
        return False
    d = b - a
    t = np.clip(np.einsum("pk,sk->ps", p, d) - np.einsum("sk,sk->s", a, d), 0, None)
    t = np.minimum(t / np.maximum(np.einsum("sk,sk->s", d, d), 1e-300), 1.0)
    nearest = a[None] + t[..., None] * d[None]
    return bool(np.all(np.min(np.hypot(*(p[:, None] - nearest).transpose(2, 0, 1)),
                              axis=1) <= tol))


def separate_coinciding(chart: Chart) -> Chart:
    """``chart`` with every solid line that covers a line drawn before it (each point of the
    earlier line within :data:`COINCIDE_TOL` of the chart's extents from the later one), or
    a dashed one that covers a line of its dash, given a dash of its own, so both show: the
    dashed line on top lets the one below through its gaps (issue 49: a legend must not name
    a line nobody can see). The legend's swatch follows the dash. Other charts come back as
    they are (the same object)."""
    return coinciding_lines(chart)[0]


def coinciding_lines(chart: Chart) -> tuple[Chart, list[tuple[str, str]]]:
    """:func:`separate_coinciding`'s chart, and the ``(on top, under)`` labels of each
    labelled line that lies on a labelled line drawn before it (the live legend names them)."""
    lines = [i for i, s in enumerate(chart.series) if s.kind == "line" and s.x.size >= 2]
    if len(lines) < 2:
        return chart, []
    pts = {i: _points(chart.series[i], chart.y_log) for i in lines}
    every = np.concatenate([pts[i] for i in lines])
    if not len(every):
        return chart, []
    extent = every.max(axis=0) - every.min(axis=0)
    scale = np.where(extent > 0, extent, 1.0)
    series, changed, pairs = list(chart.series), False, []
    for pos, i in enumerate(lines):
        under = [series[j] for j in lines[:pos] if _covers(pts[i], pts[j], scale, COINCIDE_TOL)]
        if not under:
            continue
        pairs += [(series[i].label, u.label) for u in under
                  if series[i].label is not None and u.label is not None]
        taken = {u.dash for u in under}
        # solid on top hides any line below; a dash on a line of the same dash hides it too
        if series[i].dash == "solid" or series[i].dash in taken:
            free = [d for d in COINCIDING_DASHES if d not in taken]
            series[i] = replace(series[i], dash=(free or COINCIDING_DASHES)[0])
            changed = True
    return (replace(chart, series=tuple(series)) if changed else chart), pairs
