"""What a live figure shows, as numbers and labels: :class:`Series` (one layer) and
:class:`Chart` (axis names, title, layers and what the figure standard needs to know about the
axes: log, named categories, geometry). No plotting objects: :mod:`.live` draws a Chart and
:mod:`.axes` chooses its ranges and tickers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
