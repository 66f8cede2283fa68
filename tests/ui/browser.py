"""Browser helpers shared by the UI tests and the latency benchmark (Playwright + Chromium).

Uses the system Chromium (Debian's ``chromium`` package); Playwright never downloads a browser here.
Nothing here is imported by the apps themselves.
"""

from __future__ import annotations

import socket
import statistics
import time
from functools import partial

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26.dashboards.app import Chart, ExplorerBase, Series, perf

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]

#: A number summarising every ColumnDataSource reachable from the document's roots: it
#: changes when any plotted data changes (patched in place or re-rendered).
FINGERPRINT_JS = """() => {
  const docs = window.Bokeh && window.Bokeh.documents;
  if (!docs || docs.length === 0) return null;
  const doc = docs[0];
  const seen = new Set(); const stack = [...doc.roots()];
  let acc = 0, n = 0;
  const visit = (v) => {
    if (v == null) return;
    if (typeof v === 'object' && v.id !== undefined && typeof v.properties === 'object') {
      stack.push(v); return; }
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (v instanceof Map) { v.forEach((x) => visit(x)); return; }
  };
  while (stack.length) {
    const m = stack.pop();
    if (seen.has(m.id)) continue; seen.add(m.id);
    const kind = m.type || (m.constructor && m.constructor.name);
    if (kind === 'ColumnDataSource') {
      const data = m.data;
      const cols = data instanceof Map ? [...data.values()] : Object.values(data);
      for (const col of cols) {
        const arr = ArrayBuffer.isView(col) ? col : (Array.isArray(col) ? col : []);
        for (let i = 0; i < arr.length; i++) {
          const x = arr[i];
          if (typeof x === 'number' && Number.isFinite(x)) { acc += x * ((n % 13) + 1); n++; }
        }
      }
    }
    for (const prop of Object.values(m.properties)) {
      try { visit(prop.get_value()); } catch (e) {}
    }
  }
  return `${n}:${acc}`;
}"""


class TrivialExplorer(pn.viewable.Viewer):
    """The latency yardstick: one slider, one curve (same DynamicMap pattern as the apps)."""

    frequency = param.Number(1.0, bounds=(0.1, 10.0), step=0.1, doc="Frequency of the sine.")

    @param.depends("frequency")
    def curve_view(self) -> hv.Curve:
        x = np.linspace(0, 2 * np.pi, 200)
        return hv.Curve((x, np.sin(self.frequency * x)), "x", "y").opts(responsive=True,
                                                                        min_height=300)

    def plot_data(self) -> dict:
        return {"y": np.sin(self.frequency * np.linspace(0, 2 * np.pi, 200))}

    def __panel__(self):
        return pn.Row(pn.Param(self.param, show_name=False, width=300),
                      pn.pane.HoloViews(hv.DynamicMap(self.curve_view),
                                        sizing_mode="stretch_width"))


def create_trivial_app():
    pn.extension()
    perf.install()  # same server settings as the apps it is compared with
    hv.extension("bokeh")
    return pn.Column(TrivialExplorer())


class SlowRunExplorer(ExplorerBase):
    """A Run of known length (three CPU-bound stages of ``stage_s`` seconds, pure Python, so
    the GIL is contended as in a real fit): the yardstick of "the server answers while a Run
    computes", independent of how fast a paper's Run happens to be on this machine."""

    stage_s = param.Number(15.0, bounds=(0.5, 60.0), doc="Seconds of CPU work per stage.")
    run = param.Event(doc="Start the slow Run.")

    def live_charts(self) -> list:
        return [self.chart]

    @param.depends("stage_s", "run_done")
    def chart(self) -> Chart:
        x = np.arange(10.0)
        return Chart("Finished Runs", "step", "finished Runs",
                     [Series("black", x, np.full_like(x, self.run_done))])

    @staticmethod
    def _busy(seconds: float) -> int:
        end, n = time.perf_counter() + seconds, 0
        while time.perf_counter() < end:
            n += sum(i * i for i in range(1000))
        return n

    @param.depends("run", watch=True)
    def _run(self) -> None:
        self.run_stages([(f"busy {i + 1}", partial(self._busy, self.stage_s))
                         for i in range(3)], lambda results: None)

    def __panel__(self):
        controls = pn.Param(self.param, show_name=False, width=300, widgets={
            "run": {"type": pn.widgets.Button, "name": "Run"}})
        return pn.Row(pn.Column(controls, self.run_status), *self.live_panes())


def create_slow_run_app():
    pn.extension()
    perf.install()
    return pn.Column(SlowRunExplorer())


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                      headless=True)


def open_app(page, url: str, timeout_ms: int = 90_000) -> None:
    """Load a served app and wait until Bokeh has rendered a plot canvas."""
    page.goto(url, timeout=timeout_ms)
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0",
                           timeout=timeout_ms)
    page.locator("canvas").first.wait_for(state="visible", timeout=timeout_ms)
    page.locator(".noUi-handle").first.wait_for(state="visible", timeout=timeout_ms)
    wait_until_stable(page)


def fingerprint(page) -> str | None:
    return page.evaluate(FINGERPRINT_JS)


def wait_until_stable(page, quiet_s: float = 0.5, timeout_s: float = 30.0) -> str | None:
    """Wait until the plotted data stops changing for ``quiet_s``."""
    deadline = time.time() + timeout_s
    last, since = fingerprint(page), time.time()
    while time.time() < deadline:
        time.sleep(0.05)
        now = fingerprint(page)
        if now != last:
            last, since = now, time.time()
        elif time.time() - since >= quiet_s:
            break
    return last


#: In-page timing of one slider step. Records the keydown time and, for every change to a
#: plot model (data sources, spans, ranges, titles) or to a layout's children (a plot
#: rendered anew), when it was applied and when the next frame was painted (two animation
#: frames later). Panel sends each plot's update as its own message, so "the first plot
#: changed" can be a cheap marker while other plots are still being computed: the latency
#: that counts is the paint after the LAST plot change of the step.
LATENCY_HOOK_JS = """() => {
  if (window.__icml26_steps) return;
  window.__icml26_steps = [];
  const PLOT_MODELS = new Set(['ColumnDataSource', 'Span', 'Range1d', 'DataRange1d', 'Title']);
  document.addEventListener('keydown', () => {
    window.__icml26_steps.push({keydown: performance.now(), changes: [], painted: []});
  }, true);
  Bokeh.documents[0].on_change((ev) => {
    const steps = window.__icml26_steps;
    if (!steps.length) return;
    const m = ev.model || ev.column_source;
    const kind = m && (m.type || (m.constructor && m.constructor.name));
    if (!PLOT_MODELS.has(kind) && ev.attr !== 'children') return;
    const step = steps[steps.length - 1];
    const i = step.changes.length;
    step.changes.push(performance.now());
    requestAnimationFrame(() => requestAnimationFrame(() => {
      step.painted[i] = performance.now(); }));
  });
}"""


def slider_latency(page, presses: int = 10, timeout_s: float = 30.0) -> list[float]:
    """Seconds from a key press on the first slider to every updated plot being painted."""
    return [last for _, last in slider_steps(page, presses, timeout_s)]


def slider_steps(page, presses: int = 10, timeout_s: float = 30.0,
                 quiet_s: float = 0.3) -> list[tuple[float, float]]:
    """``(first, last)`` per key press on the first slider: seconds from the keydown to the
    frame painted after the first, and after the last, plot change of the step.

    Timed inside the page, so Playwright's own round trips do not count. A step ends when
    no plot has changed for ``quiet_s``. Presses alternate right/left so the slider
    never runs into a bound (a press at the bound changes nothing and would time out). The
    alternation counts every press made on the page, so calls of an odd number of presses
    do not walk the slider to its bound (heima's hops slider, two steps from it, did).
    """
    page.evaluate(LATENCY_HOOK_JS)
    handle = page.locator(".noUi-handle").first
    out = []
    for _ in range(presses):
        n = page.evaluate("() => window.__icml26_steps.length")
        handle.press("ArrowRight" if n % 2 == 0 else "ArrowLeft")
        # cheap in-page predicates, so the waiting does not compete with the page's work
        # (polling a fingerprint of every data source did, on pages with many plots)
        page.wait_for_function(
            f"() => (window.__icml26_steps[{n}] || {{changes: []}}).changes.length > 0",
            polling=20, timeout=timeout_s * 1000)
        page.wait_for_function(
            f"""() => {{ const s = window.__icml26_steps[{n}];
                const last = s.changes[s.changes.length - 1];
                return performance.now() - last >= {quiet_s * 1000}
                    && s.painted.filter((t) => t !== undefined).length === s.changes.length; }}""",
            polling=50, timeout=timeout_s * 1000)
        step = page.evaluate(f"() => window.__icml26_steps[{n}]")
        painted = [t for t in step["painted"] if t is not None]
        out.append(((painted[0] - step["keydown"]) / 1000,
                    (max(painted) - step["keydown"]) / 1000))
    return out


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_in_thread(apps: dict, port: int | None = None):
    """Serve ``{route: callable}`` on 127.0.0.1 in a thread; returns ``(server, port)``."""
    port = port or free_port()
    server = perf.serve(apps, port=port, address="127.0.0.1", show=False, threaded=True,
                      allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until the socket accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return server, port


class ServedApps:
    """``all_apps()`` served by a separate Python process, as ``icml26 serve`` runs for a user:
    the server's threads never share a GIL with the test process (Playwright, earlier tests'
    leftovers), so what the tests time is the server's own behaviour. ``url``; ``stop()``."""

    def __init__(self, log_path: str, timeout_s: float = 120.0):
        import subprocess
        import sys
        from pathlib import Path

        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        self._log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        script = Path(__file__).with_name("serve_apps.py")
        self._proc = subprocess.Popen([sys.executable, str(script), str(port)],
                                      stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.time() + timeout_s
        while time.time() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"the app server exited ({self._proc.returncode}); "
                                   f"see {log_path}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the app server did not listen within {timeout_s:.0f} s; "
                           f"see {log_path}")

    def stop(self) -> None:
        self._proc.terminate()
        try:
            self._proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a server that ignores SIGTERM is killed
            self._proc.kill()
        self._log.close()


def all_apps() -> dict:
    """Routes of ``icml26 serve`` plus ``/trivial`` (the latency yardstick) and ``/slow_run``
    (a Run of known length)."""
    from icml26 import papers
    from icml26.dashboards.app.index import create_index
    from icml26.dashboards.app.sweep_page import create_app as create_robustness

    apps = {"/": create_index, "/trivial": create_trivial_app, "/slow_run": create_slow_run_app,
            "/robustness": create_robustness}
    for p in papers.built():
        apps[f"/{p.slug}"] = p.dashboard().create_app
    return apps


# ---------------------------------------------------------------------- every figure draws
#: Every Bokeh plot on the page (all documents, all views): its box and frame on the page,
#: its axis ranges and, per glyph renderer, how many rows it has and its x / y columns.
PLOTS_JS = """() => {
  const column = (r, name) => {
    const p = r.glyph.properties[name];
    if (!p) return null;
    const v = p.get_value();
    if (v == null || v.field === undefined) return null;
    const data = r.data_source.data;
    const c = data instanceof Map ? data.get(v.field) : data[v.field];
    return c ? Array.from(c, Number) : null;
  };
  const out = [];
  for (const view of Bokeh.index.all_views()) {
    const m = view.model;
    if (!(m && 'x_range' in m && 'renderers' in m) || !view.el.isConnected) continue;
    const r0 = view.el.getBoundingClientRect();  // page coordinates (the page may scroll)
    const box = {x: r0.x + window.scrollX, y: r0.y + window.scrollY, width: r0.width,
                 height: r0.height};
    const f = view.frame ? view.frame.bbox : {x: 0, y: 0, width: 0, height: 0};
    const title = m.title == null ? '' : (typeof m.title === 'string' ? m.title : m.title.text);
    const renderers = [];
    for (const r of m.renderers) {
      if (!r.glyph || !r.data_source || !r.visible) continue;
      renderers.push({glyph: r.glyph.type, rows: r.data_source.get_length() ?? 0,
                      x: column(r, 'x'), y: column(r, 'y')});
    }
    const axes = [...(m.below || []), ...(m.left || [])]
      .filter((a) => a.visible && 'axis_label' in a)
      .map((a) => { const l = a.axis_label; return l == null ? '' : String(l.text ?? l); });
    out.push({id: m.id, title, axes, box: [box.x, box.y, box.width, box.height],
              frame: [box.x + f.x, box.y + f.y, f.width, f.height],
              x_range: [m.x_range.start, m.x_range.end], y_range: [m.y_range.start, m.y_range.end],
              renderers});
  }
  return out;
}"""

#: a pixel counts as ink when it is darker than the grid lines (#e5e5e5) or clearly coloured
INK_LUMA, INK_CHROMA = 200, 40
#: share of the frame's pixels that must be ink for a plot to count as drawn
MIN_INK = 0.002
FRAME_INSET = 4  # px


def plots(page) -> list[dict]:
    return page.evaluate(PLOTS_JS)


def ink_share(png: bytes) -> float:
    """Share of a screenshot's pixels that are ink (glyphs, text), not background or grid."""
    import io

    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=float)
    luma = rgb @ np.array([0.299, 0.587, 0.114])
    chroma = rgb.max(axis=-1) - rgb.min(axis=-1)
    return float(((luma < INK_LUMA) | (chroma > INK_CHROMA)).mean())


def _inside(values, lo, hi) -> bool:
    lo, hi = min(lo, hi), max(lo, hi)
    pad = 1e-9 * max(hi - lo, 1e-300)
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    return bool(((v >= lo - pad) & (v <= hi + pad)).all())


def figure_problems(page, where: str) -> list[str]:
    """What is wrong with the page's figures: a plot with no frame, no glyph rows, no ink in
    its frame (blank), or data outside its visible ranges; and what
    :func:`figure_checks.layout_problems` finds (overlapping tick labels, a log axis with
    under three labels, a legend over data, a point on the frame's edge, a page wider than
    its window). Empty when every figure reads."""
    found = plots(page)
    if not found:
        return [f"{where}: no Bokeh plot on the page"]
    problems = []
    for p in found:
        name = f"{where}: plot {p['title']!r}"
        x, y, w, h = p["frame"]
        if w < 20 or h < 20:
            problems.append(f"{name} has a frame of {w:.0f} x {h:.0f} px (not laid out)")
            continue
        unnamed = [a for a in p["axes"] if a.strip().lower() in ("", "x", "y")]
        if unnamed:
            problems.append(f"{name} has axes without a quantity: {p['axes']}")
        if not any(r["rows"] > 0 for r in p["renderers"]):
            problems.append(f"{name} has no glyph with data")
            continue
        # inset: the axis lines and ticks sit on the frame's edge
        share = ink_share(page.screenshot(full_page=True, clip={
                                                "x": x + FRAME_INSET, "y": y + FRAME_INSET,
                                                "width": w - 2 * FRAME_INSET,
                                                "height": h - 2 * FRAME_INSET}))
        if share < MIN_INK:
            problems.append(f"{name} is blank: {share:.2%} of its frame is drawn")
        for r in p["renderers"]:
            for axis in ("x", "y"):
                values, rng = r[axis], p[f"{axis}_range"]
                if values and None not in rng and not _inside(values, *rng):
                    problems.append(f"{name}: {r['glyph']} {axis} data "
                                    f"[{np.nanmin(values):.4g}, {np.nanmax(values):.4g}] "
                                    f"outside the visible {axis} range {rng}")
    from figure_checks import layout_problems  # ticks, legends, edges, the page's width

    return problems + layout_problems(page, where)


def block_network(context) -> list[str]:
    """Fail every request that leaves this machine; returns the list of blocked URLs."""
    from urllib.parse import urlparse

    blocked: list[str] = []

    def route(r):
        host = urlparse(r.request.url).hostname or ""
        if r.request.url.startswith(("data:", "blob:", "file:")) or host in (
                "127.0.0.1", "localhost"):
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    context.route("**/*", route)
    return blocked
