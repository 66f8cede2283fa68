"""Checks of what a reader sees in a painted page, beyond "every figure draws" (``browser.py``):
tick labels that overlap, a log axis labelled at fewer than three values, a page wider than
its window, a legend box over glyphs, a data point on the frame's edge, a line drawn exactly
under another (coinciding series: its legend entry names a line nobody can see).

Read from the page: Bokeh's views (``Bokeh.index``: the boxes it laid out and the tick labels
it paints, computed by the axis view's own ``compute_labels`` and placed as its paint does)
and the DOM (the page's scroll width). Each check has a mutation test in
``test_figure_checks.py``: a figure made to break it must fail it.
"""

from __future__ import annotations

import math

import numpy as np

#: px two neighbouring tick labels may overlap by (anti-aliasing; not a pile-up)
OVERLAP_TOL = 1.0
#: labelled ticks a log axis must show (the figure standard)
MIN_LOG_LABELS = 3
#: px: a marker's centre this close to the frame's edge sits on it (drawn half outside)
EDGE_PX = 1.5
#: px a page may be wider than its window (scrollbars, rounding)
WIDTH_TOL = 2
#: px: a line whose every point lies this close to a later line is drawn under it
COVER_PX = 1.0

#: Per plot: its axes (kind, dimension, orientation angle, the tick labels it paints: text and
#: box in canvas px), its legends' boxes, its frame box and, per marker / line renderer, the
#: screen coordinates of its points (canvas px). Plus the page's and the window's widths.
LAYOUT_JS = """() => {
  const out = {page_width: document.documentElement.scrollWidth,
               body_width: document.body ? document.body.scrollWidth : 0,
               window_width: window.innerWidth, plots: []};
  const box = (b) => [b.left, b.top, b.right, b.bottom];
  for (const view of Bokeh.index.all_views()) {
    const m = view.model;
    if (!(m && 'x_range' in m && 'renderers' in m) || !view.el.isConnected || !view.frame)
      continue;
    const plot = {id: m.id, title: m.title == null ? '' :
                    (typeof m.title === 'string' ? m.title : m.title.text),
                  frame: box(view.frame.bbox), axes: [], legends: [], glyphs: []};
    const fb = view.frame.bbox;
    if (fb.width < 20 || fb.height < 20) continue;
    for (const rv of view.renderer_views.values()) {
      const rm = rv.model;
      const kind = rm.type || '';
      if (kind.endsWith('Axis') && rm.visible && 'major_label_orientation' in rm) {
        try {
          const dim = rv.dimension;
          // the labels the axis paints: a categorical axis' factors, else its ticks' labels
          let [labels, coords, orient, visuals] = rv._get_factor_info
            ? rv._get_factor_info()[0]
            : [null, rv.tick_coords.major, rm.major_label_orientation,
               rv.visuals.major_label_text];
          if (labels == null) labels = rv.compute_labels(coords[dim]);
          const standoff = rv.extents.tick + rm.major_label_standoff;
          const [sxs, sys] = rv.scoords(coords);
          const [nx, ny] = rv.normals;
          const {vertical_align, align} = rv.panel.get_label_text_heuristics(orient);
          const angle = rv.panel.get_label_angle_heuristic(orient);
          labels.visuals = visuals.values();
          labels.angle = angle;
          labels.base_font_size = rv.plot_view.base_font_size;
          const items = labels.items;
          const ticks = [];
          for (let i = 0; i < items.length; i++) {
            const l = items[i];
            l.position = {sx: sxs[i] + nx * standoff, sy: sys[i] + ny * standoff,
                          x_anchor: align, y_anchor: vertical_align};
            if ('align' in l) l.align = align;
            const b = l.bbox();
            const size = l.size ? l.size() : {width: b.width, height: b.height};
            // a TextBox has .text; an exponent label (10^-3) is a base and an exponent
            const text = l.text ?? (l.base && l.expo ? `${l.base.text}^${l.expo.text}`
                                                     : (b.width > 0 ? '?' : ''));
            ticks.push({text: String(text), box: [b.left, b.top, b.right, b.bottom],
                        size: [size.width, size.height], at: dim == 0 ? sxs[i] : sys[i]});
          }
          const font = String(visuals.font_value ? visuals.font_value() : '');
          const px = font.match(/([0-9.]+)px/);
          plot.axes.push({kind, dim, angle, font_px: px ? Number(px[1]) : 12,
                          policy: rm.major_label_policy.type,
                          label: rm.axis_label == null ? '' : String(rm.axis_label), ticks});
        } catch (e) { plot.axes.push({kind, error: String(e)}); }
      } else if (kind === 'Legend' && rm.visible && rm.items.length) {
        const b = rv.bbox;
        if (b && b.width > 0) plot.legends.push({box: box(b)});
      } else if (kind === 'GlyphRenderer' && rm.visible && rv.glyph) {
        const g = rm.glyph;
        const data = rm.data_source.data;
        const col = (name) => {
          const p = g.properties[name];
          if (!p) return null;
          const v = p.get_value();
          if (v == null) return null;
          if (v.field === undefined) return typeof v.value === 'number' ? v.value : null;
          const c = data instanceof Map ? data.get(v.field) : data[v.field];
          return c ? Array.from(c, Number) : null;
        };
        let xs = col('x'), ys = col('y');
        if (!Array.isArray(xs) || !Array.isArray(ys)) continue;
        const n = Math.min(xs.length, ys.length);
        const sx = view.frame.x_scale, sy = view.frame.y_scale;
        const pts = [];
        for (let i = 0; i < n; i++) {
          const x = xs[i], y = ys[i];
          pts.push(Number.isFinite(x) && Number.isFinite(y)
                   ? [sx.compute(x), sy.compute(y)] : null);
        }
        // what decides whether a line under another shows: its width, dash and opacity
        const val = (name) => {
          const p = g.properties[name];
          const v = p ? p.get_value() : null;
          return v != null && typeof v === 'object' && 'value' in v ? v.value : v;
        };
        const dash = val('line_dash');
        plot.glyphs.push({glyph: g.type, points: pts, width: Number(val('line_width') ?? 1),
                          alpha: Number(val('line_alpha') ?? 1),
                          dashed: Array.isArray(dash) ? dash.length > 0
                                  : !(dash == null || dash === '' || dash === 'solid'),
                          name: rm.name || ''});
      }
    }
    out.plots.push(plot);
  }
  return out;
}"""

MARKERS = {"Scatter", "Circle"}
LINES = {"Line", "Step"}


def layout(page) -> dict:
    return page.evaluate(LAYOUT_JS)


def overlapping_labels(axis: dict) -> list[tuple[str, str]]:
    """Neighbouring tick labels of ``axis`` whose painted text overlaps: boxes that overlap
    along the axis (horizontal labels on x, any labels on y), or tilted labels on x closer
    (perpendicular to their baseline) than their text is high."""
    ticks = [t for t in axis["ticks"] if t["text"].strip()]
    ticks.sort(key=lambda t: t["at"])
    out = []
    for a, b in zip(ticks, ticks[1:]):
        if axis["dim"] == 0 and abs(math.sin(axis["angle"])) > 0.05:
            # tilted labels: parallel lines of text, their distance against the text's height
            gap = abs(b["at"] - a["at"]) * abs(math.sin(axis["angle"]))
            clash = gap + OVERLAP_TOL < axis["font_px"]
        elif axis["dim"] == 0:
            left, right = sorted((a, b), key=lambda t: t["box"][0])
            clash = left["box"][2] - right["box"][0] > OVERLAP_TOL
        else:
            top, low = sorted((a, b), key=lambda t: t["box"][1])
            clash = top["box"][3] - low["box"][1] > OVERLAP_TOL
        if clash:
            out.append((a["text"], b["text"]))
    return out


def _segments_hit(points: list, box: list, step: float = 2.0) -> bool:
    """Whether a polyline (screen points, None breaks it) passes through ``box``."""
    x0, y0, x1, y1 = box
    prev = None
    for p in points:
        if p is None:
            prev = None
            continue
        if prev is not None:
            n = max(1, int(math.hypot(p[0] - prev[0], p[1] - prev[1]) / step))
            t = np.linspace(0, 1, n + 1)
            xs, ys = prev[0] + t * (p[0] - prev[0]), prev[1] + t * (p[1] - prev[1])
            if np.any((xs > x0) & (xs < x1) & (ys > y0) & (ys < y1)):
                return True
        elif x0 < p[0] < x1 and y0 < p[1] < y1:
            return True
        prev = p
    return False


def _within(p, frame, slack: float = 0.0) -> bool:
    return (frame[0] - slack <= p[0] <= frame[2] + slack
            and frame[1] - slack <= p[1] <= frame[3] + slack)


def _distance_to_polyline(points: np.ndarray, line: list) -> np.ndarray:
    """Each of ``points``' (n, 2) screen distance to the polyline ``line`` (None breaks it)."""
    best = np.full(len(points), np.inf)
    for a, b in zip(line, line[1:]):
        if a is None or b is None:
            continue
        a, b = np.asarray(a, float), np.asarray(b, float)
        d = b - a
        t = np.clip(((points - a) @ d) / max(float(d @ d), 1e-12), 0.0, 1.0)
        best = np.minimum(best, np.hypot(*(points - (a + t[:, None] * d)).T))
    return best


def covered_lines(glyphs: list[dict], tol: float = COVER_PX) -> list[tuple[int, int]]:
    """``(under, over)`` glyph indices of every line drawn exactly under a later one: each
    point of ``under`` within ``tol`` px of ``over``'s polyline, while ``over`` is solid,
    opaque and at least as wide (a dashed or narrower line on top lets the one below show)."""
    out = []
    for i, under in enumerate(glyphs):
        pts = [p for p in under["points"] if p is not None]
        if under["glyph"] not in LINES or len(pts) < 2 or under.get("alpha", 1) == 0:
            continue
        for j in range(i + 1, len(glyphs)):
            over = glyphs[j]
            if (over["glyph"] not in LINES or over.get("dashed") or over.get("alpha", 1) < 0.9
                    or over.get("width", 1) + 0.25 < under.get("width", 1)):
                continue
            if np.all(_distance_to_polyline(np.asarray(pts, float), over["points"]) <= tol):
                out.append((i, j))
                break
    return out


def plot_problems(plot: dict, where: str) -> list[str]:
    """Overlapping tick labels, a log axis with under three labels, a legend over glyphs and
    markers on the frame's edge, in one plot of :func:`layout`."""
    name = f"{where}: plot {plot['title']!r}"
    problems = []
    frame = plot["frame"]
    for axis in plot["axes"]:
        if "error" in axis:
            problems.append(f"{name}: its {axis['kind']} could not be read: {axis['error']}")
            continue
        which = "x" if axis["dim"] == 0 else "y"
        clashes = overlapping_labels(axis) if axis["policy"] == "AllLabels" else []
        if clashes:
            problems.append(f"{name}: {which} tick labels overlap: {clashes[:3]}")
        labelled = [t["text"] for t in axis["ticks"] if t["text"].strip()]
        if axis["kind"] == "LogAxis" and len(labelled) < MIN_LOG_LABELS:
            problems.append(f"{name}: its log {which} axis is labelled at {len(labelled)} "
                            f"value(s) only: {labelled}")
    for legend in plot["legends"]:
        box = legend["box"]
        inside = _within(box[:2], frame, 1) and _within(box[2:], frame, 1)
        if not inside:
            continue  # outside the frame (the standard's place): covers no data
        for g in plot["glyphs"]:
            pts = [p if p is None or _within(p, frame) else None for p in g["points"]]
            if _segments_hit(pts if g["glyph"] in LINES else
                             [q for p in pts for q in (p, None)], box):
                problems.append(f"{name}: its legend {[round(v) for v in box]} covers "
                                f"{g['glyph']} data")
                break
    for under, over in covered_lines(plot["glyphs"]):
        u, o = plot["glyphs"][under], plot["glyphs"][over]
        problems.append(f"{name}: line {u.get('name') or under} is drawn exactly under line "
                        f"{o.get('name') or over} (coinciding series: dash, mark or offset "
                        f"one, and say so in the caption)")
    for g in plot["glyphs"]:
        if g["glyph"] not in MARKERS:
            continue
        on_edge = [p for p in g["points"] if p is not None and _within(p, frame, EDGE_PX) and (
            min(abs(p[0] - frame[0]), abs(p[0] - frame[2])) < EDGE_PX
            or min(abs(p[1] - frame[1]), abs(p[1] - frame[3])) < EDGE_PX)]
        if on_edge:
            problems.append(f"{name}: {len(on_edge)} {g['glyph']} point(s) on the frame's "
                            f"edge (first at {[round(v) for v in on_edge[0]]}, frame "
                            f"{[round(v) for v in frame]})")
    return problems


def layout_problems(page, where: str) -> list[str]:
    """Every problem :func:`plot_problems` finds on the page, and a page wider than its
    window (a horizontal scroll bar)."""
    found = layout(page)
    problems = []
    width = max(found["page_width"], found["body_width"])
    if width > found["window_width"] + WIDTH_TOL:
        problems.append(f"{where}: the page is {width} px wide in a "
                        f"{found['window_width']} px window")
    for plot in found["plots"]:
        problems += plot_problems(plot, where)
    return problems
