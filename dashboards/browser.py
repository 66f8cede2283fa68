"""Browser helpers shared by the UI tests and the latency benchmark (Playwright + Chromium).

Uses the system Chromium (Debian's ``chromium`` package); Playwright never downloads a browser here.
Nothing here is imported by the apps themselves.
"""

from __future__ import annotations

import socket
import statistics
import time

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26.dashboards import perf

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


def slider_latency(page, presses: int = 10, timeout_s: float = 30.0) -> list[float]:
    """Seconds from a key press on the first slider to a changed plot, per press.

    Presses alternate right/left so the slider never runs into a bound (a press at the
    bound changes nothing and would time out)."""
    handle = page.locator(".noUi-handle").first
    out = []
    for i in range(presses):
        before = fingerprint(page)
        start = time.perf_counter()
        handle.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
        deadline = start + timeout_s
        while time.perf_counter() < deadline:
            if fingerprint(page) != before:
                break
            time.sleep(0.005)
        else:
            raise TimeoutError("the plot did not change after a slider key press")
        out.append(time.perf_counter() - start)
        wait_until_stable(page, quiet_s=0.3)
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
    server = pn.serve(apps, port=port, address="127.0.0.1", show=False, threaded=True,
                      allow_websocket_origin=[f"127.0.0.1:{port}", f"localhost:{port}"])
    deadline = time.time() + 30
    while time.time() < deadline:  # wait until the socket accepts connections
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    return server, port


def all_apps() -> dict:
    """Routes of ``icml26 serve`` plus ``/trivial`` (the latency yardstick)."""
    from icml26 import papers
    from icml26.dashboards.index import create_index

    apps = {"/": create_index, "/trivial": create_trivial_app}
    for p in papers.reproduced():
        apps[f"/{p.slug}"] = p.dashboard().create_app
    return apps
