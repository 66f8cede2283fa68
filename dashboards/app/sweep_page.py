"""The robustness page (``/robustness``): per-claim hold rates over seeds, computed on Dask.

Pick papers and a seed range and press Run: each (paper, seed) is one Dask task
(:mod:`icml26.sweep`, the same code as ``icml26 sweep``), and as each future completes the
progress bar moves and the claim's bar (held on k of n seeds, with its Wilson 95% interval)
grows. Until the first Run the figure shows the committed record of the chosen papers, never
an empty frame: the estimates the papers' status is computed from (:mod:`icml26.estimates`
over ``benchmarks/claim_values.csv``), each claim's bar its share of seeds held with the Wilson
95% interval, its label the estimate by its unit (a ``mean`` claim's mean and BCa interval, a
seed-independent claim's one value) and its verdict. Seeds already in the sweep dataset are
counted at once and not run again (unless "recompute" is ticked); results are written to
the same dataset as the command line.
Stop cancels the tasks not yet finished, also while Dask is still starting (then nothing is
submitted). The link opens Dask's own dashboard.

The sweep runs on a thread of its own, so the server keeps answering; every change to the page
from that thread goes through the document's ``add_next_tick_callback`` (Bokeh's documented
way to update a document from another thread).
"""

from __future__ import annotations

import threading
from functools import partial

import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, LabelSet, Range1d, Whisker
from bokeh.plotting import figure

from icml26 import estimates, ledger, papers, status, sweep
from icml26.dashboards.app import perf

EXPECTED, NOT_EXPECTED = "#1f77b4", "#9e9e9e"
ROW_PX = 24


def built_slugs() -> list[str]:
    return [p.slug for p in papers.built()]


def _short(rec: status.ClaimRecord) -> str:
    """A committed claim's label beside its bar: ``15/16 ✓`` (each), ``mean 0.12 ✓`` (mean),
    ``0.031 on all ✓`` (the same value on every seed); the mark is the estimate's verdict."""
    e = rec.estimate
    mark = "✓" if e.holds else "✗"
    if e.constant:
        return f"{estimates.fmt(e.values[0])} on all {mark}"
    if e.unit == "mean":
        return f"mean {estimates.fmt(e.mean)} {mark}"
    return f"{e.held}/{e.n} {mark}"


class RobustnessExplorer(pn.viewable.Viewer):
    """Hold rates of every claim of the chosen papers over a range of seeds, live."""

    papers = param.ListSelector(default=["recruitment"], objects=built_slugs(),
                                doc="Papers whose claims are swept.")
    first_seed = param.Integer(0, bounds=(0, 1_000_000), doc="First seed of the range.")
    n_seeds = param.Integer(8, bounds=(1, 1024), softbounds=(1, 128),
                            doc="Number of seeds: first_seed to first_seed + n_seeds - 1.")
    workers = param.Integer(2, bounds=(1, 64), doc="Worker processes of the local cluster.")
    scheduler = param.String("", doc="Address of an existing Dask scheduler "
                                     "(tcp://host:8786); empty: a LocalCluster here.")
    recompute = param.Boolean(False, doc="Run seeds already in the dataset again (its rows "
                                         "stay unique: only new rows are written).")

    def __init__(self, task: sweep.Task | None = None, **params):
        """``task``: what each (paper, seed) runs (default: the paper's claims())."""
        super().__init__(**params)
        self._task = task
        self._alert = pn.pane.Alert("", alert_type="danger", visible=False)
        self._progress = pn.indicators.Progress(value=0, max=1, sizing_mode="stretch_width")
        self._status = pn.pane.Markdown("", margin=(0, 10))
        self._dask_link = pn.pane.Markdown("Dask dashboard: starts with the first Run.",
                                           margin=(0, 10))
        self._run_button = pn.widgets.Button(label="Run", color="primary", width=100)
        self._stop_button = pn.widgets.Button(label="Stop", color="danger", width=100,
                                              disabled=True)
        self._run_button.on_click(lambda _: self.run())
        self._stop_button.on_click(lambda _: self.stop())
        self.source = ColumnDataSource(self._columns({}))
        self.figure = self._figure()
        self._lock = threading.Lock()
        self._counts: dict[tuple[str, str], list] = {}  # (paper, claim) -> [k, n, expected]
        # the committed record's (label, hover text) per (paper, claim): its estimate
        self._texts: dict[tuple[str, str], tuple[str, str]] = {}
        self._done = self._total = 0
        self._client, self._client_key = None, None
        self._sweep: sweep.Sweep | None = None
        self._stop_requested = False  # Stop pressed during this run (guarded by _lock)
        self._thread: threading.Thread | None = None
        self._doc = None
        self._preview()  # the committed record, and what Run will do

    # ------------------------------------------------------------------ the figure
    def _figure(self):
        fig = figure(title="Claims held, share of seeds (bar) with Wilson 95% interval",
                     y_range=FactorRange(factors=[]), x_range=Range1d(0, 1.35),
                     x_axis_label="share of seeds where the claim holds",
                     y_axis_label="paper · claim", height=160, sizing_mode="stretch_width",
                     min_width=300, tools="save", toolbar_location="right",
                     output_backend="canvas")
        bars = fig.hbar(y="label", right="rate", height=0.6, source=self.source,
                        color="color", fill_alpha=0.55, line_color=None)
        fig.add_tools(HoverTool(renderers=[bars], tooltips=[("claim", "@label"),
                                                            ("", "@detail")]))
        # on top of the bars (a Whisker's default level is "underlay": an 8/8 bar hid its
        # interval 0.68-1 under itself), with end caps
        fig.add_layout(Whisker(source=self.source, base="label", lower="lo", upper="hi",
                               dimension="width", line_color="black", line_width=2,
                               level="overlay"))
        fig.add_layout(LabelSet(source=self.source, x="hi", y="label", text="text",
                                x_offset=6, y_offset=-6, text_font_size="11px"))
        return fig

    @staticmethod
    def _columns(counts: dict, texts: dict | None = None) -> dict:
        """The bars' data per (paper, claim) of ``counts``: share held, Wilson interval,
        label and hover text (``texts``' when given, else ``k/n``) and colour."""
        texts = texts or {}
        cols: dict[str, list] = {k: [] for k in ("label", "rate", "lo", "hi", "text", "detail",
                                                 "color")}
        for (paper, claim), (k, n, expected) in counts.items():
            lo, hi = sweep.wilson(k, n)
            cols["label"].append(f"{paper} · {claim}")
            cols["rate"].append(k / n)
            cols["lo"].append(lo)
            cols["hi"].append(hi)
            text, detail = texts.get((paper, claim), (f"{k}/{n}", f"held on {k} of {n} seeds"))
            cols["text"].append(text)
            cols["detail"].append(detail)
            cols["color"].append(EXPECTED if expected else NOT_EXPECTED)
        return cols

    def hold_rates(self) -> dict[tuple[str, str], tuple[int, int]]:
        """``{(paper, claim): (k, n)}`` counted so far."""
        with self._lock:
            return {key: (k, n) for key, (k, n, _) in self._counts.items()}

    @property
    def progress(self) -> tuple[int, int]:
        """``(done, total)`` of the progress bar."""
        return self._progress.value, self._progress.max

    @property
    def status(self) -> str:
        return self._status.object

    @property
    def error_message(self) -> str:
        """The alert's text ('' when hidden)."""
        return self._alert.object if self._alert.visible else ""

    def _count(self, rows) -> None:
        with self._lock:
            for r in rows:
                if r["error"] is None or r["error"] != r["error"]:  # None or NaN: a claim row
                    c = self._counts.setdefault((r["paper"], r["claim"]), [0, 0, False])
                    c[0] += bool(r["holds"])
                    c[1] += 1
                    c[2] = c[2] or bool(r["expected"])

    def _render(self, status: str | None = None) -> None:
        """Write the counts into the figure and the bar (on the document's thread)."""
        with self._lock:
            cols, done, total = (self._columns(self._counts, self._texts), self._done,
                                 self._total)
        labels = list(reversed(cols["label"]))  # first claim at the top
        if list(self.figure.y_range.factors) != labels:
            self.figure.y_range.factors = labels
            self.figure.height = 90 + ROW_PX * max(len(labels), 2)
        self.source.data = cols
        self._progress.max, self._progress.value = max(total, 1), done
        if status is not None:
            self._status.object = status

    def show_record(self) -> str:
        """Draw the committed record of the chosen papers: each claim's estimate over its
        committed values (only values of its current row, as the status counts them: seeds
        held, and beside the bar the estimate by its unit and the verdict); returns what it
        shows."""
        values = ledger.read()
        counts, texts, absent, n = {}, {}, [], set()
        for slug in self.papers:
            recs = [r for r in status.records(slug, values) if r.estimate is not None]
            absent += [] if recs else [slug]
            for r in recs:
                e = r.estimate
                counts[(slug, r.name)] = [e.held, e.n, r.expected]
                texts[(slug, r.name)] = (_short(r), f"{e.text()}; {r.verdict()}")
                n.add(e.n)
        with self._lock:
            self._counts, self._texts, self._done, self._total = counts, texts, 0, 0
        # Served, a widget change arrives on a pool thread without the document's lock:
        # Bokeh models may only change on the document's own thread (next tick).
        doc = pn.state.curdoc
        if doc is not None and doc.session_context is not None:
            doc.add_next_tick_callback(self._render)
        else:
            self._render()
        seeds = "/".join(str(s) for s in sorted(n))
        shown = (f"Showing the committed record (`benchmarks/claim_values.csv`, {seeds} swept "
                 "seeds per claim; each bar the share of seeds held, beside it the estimate "
                 "the status uses: `each` k/n, `mean` the mean with its 95% BCa interval). "
                 if counts else "")
        none = (f"No current committed record for {', '.join(absent)}: the bars come with "
                "Run. " if absent else "")
        return shown + none

    @param.depends("papers", "first_seed", "n_seeds", "recompute", watch=True)
    def _preview(self, event=None) -> None:
        """Say what Run will do with the current settings (while no run is going), under the
        committed record until the first Run (again when the papers change). Served, a
        widget change and a button press are handled on two pool threads in no set order,
        so the page confirms each change: what it says is what Run reads."""
        if self._thread is not None and self._thread.is_alive():
            return
        if event is None or event.name == "papers":  # the record is drawn again
            self._record = self.show_record()
        elif self._thread is not None:  # after a Run the bars are the Run's
            self._record = ""
        record = self._record
        seeds = self.seeds()
        again = "; seeds already in the dataset are run again" if self.recompute else ""
        self._status.object = (f"{record}Press **Run** to sweep "
                               f"{', '.join(self.papers) or 'no paper'}"
                               f" on seeds {seeds[0]}-{seeds[-1]} "
                               f"({len(self.papers) * len(seeds)} tasks{again}).")

    def _push(self, fn) -> None:
        """Run ``fn`` on the document's event loop (direct when there is no server)."""
        if self._doc is None:
            fn()
        else:
            self._doc.add_next_tick_callback(fn)

    # ------------------------------------------------------------------ Run / Stop
    def seeds(self) -> list[int]:
        return list(range(self.first_seed, self.first_seed + self.n_seeds))

    def run(self, wait: bool = False) -> bool:
        """Start a sweep on a thread (False when one is running or the settings are bad)."""
        if self._thread is not None and self._thread.is_alive():
            return False
        try:
            plan = sweep.plan(self.papers, self.seeds(), "quick", resume=not self.recompute)
        except ValueError as e:
            self._alert.object, self._alert.visible = str(e), True
            return False
        self._alert.visible = False
        self._doc = pn.state.curdoc if pn.state.curdoc and pn.state.curdoc.session_context \
            else None
        done = (sweep.read(plan.out, plan.papers, plan.scale, plan.seeds)
                if plan.done else None)
        with self._lock:
            self._counts, self._done, self._total = {}, plan.done, len(plan.papers) * len(
                plan.seeds)
            self._texts = {}  # a live sweep's bars say k/n
            self._stop_requested = False
        if done is not None:
            self._count(done.to_dict("records"))
        self._run_button.disabled, self._stop_button.disabled = True, False
        self._push(partial(self._render, f"Starting Dask for {len(plan.todo)} tasks "
                                         f"({plan.done} already in the dataset)…"))
        self._thread = threading.Thread(target=self._work, args=(plan,), daemon=True)
        self._thread.start()
        if wait:
            self.wait()
        return True

    def _connect(self):
        key = (self.workers, self.scheduler.strip())
        if self._client is None or self._client_key != key:
            if self._client is not None:
                sweep.close(self._client)
            self._client = sweep.connect(self.workers, key[1] or None)
            self._client_key = key
            link = self._client.dashboard_link
            self._push(partial(setattr, self._dask_link, "object",
                               f"Dask dashboard: [{link}]({link})"))
        return self._client

    def _work(self, plan: sweep.Plan) -> None:
        try:
            if plan.todo:
                client = self._connect()  # seconds for a new LocalCluster: Stop may come
                with self._lock:
                    stopped_early = self._stop_requested
                    if not stopped_early:
                        self._sweep = sweep.Sweep(plan, client, self._task)
                if stopped_early:
                    msg = (f"Stopped: 0 of {len(plan.todo)} tasks, before Dask had started "
                           "(nothing was submitted).")
                else:
                    self._push(partial(self._render, f"Running {len(plan.todo)} tasks on "
                                       f"{len(client.scheduler_info()['workers'])} "
                                       "Dask workers…"))
                    result = self._sweep.collect(on_task=self._on_task)
                    verb = "Stopped" if result.stopped else "Done"
                    msg = (f"{verb}: {result.completed} of {result.submitted} tasks in "
                           f"{result.seconds:.1f} s, {result.failed} failed.")
            else:
                msg = "Every seed was already in the dataset (tick recompute to run again)."
            self._push(partial(self._render, msg))
        except Exception as e:  # noqa: BLE001 - shown to the user, the server lives on
            text = f"Run failed: {type(e).__name__}: {e}"
            self._push(partial(self._fail, text))
        finally:
            with self._lock:
                self._sweep = None
            self._push(self._idle)

    def _on_task(self, paper: str, seed: int, rows: list[dict]) -> None:
        self._count(rows)
        with self._lock:
            self._done += 1
            done, total = self._done, self._total
        self._push(partial(self._render, f"{done}/{total} seeds done (last: {paper} seed "
                                         f"{seed})…"))

    def _fail(self, text: str) -> None:
        self._alert.object, self._alert.visible = text, True
        self._status.object = "Run failed (see the message above)."

    def _idle(self) -> None:
        self._run_button.disabled, self._stop_button.disabled = False, True

    def stop(self) -> None:
        """Cancel the tasks not yet finished (results so far are kept and written); pressed
        while Dask is still starting, the run ends before submitting anything."""
        with self._lock:  # _work reads the flag and publishes the sweep under the same lock
            self._stop_requested = True
            running = self._sweep
        if running is not None:
            running.cancel()
        if self._thread is not None and self._thread.is_alive():
            self._status.object = "Stopping: cancelling the remaining tasks…"

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the current run to end; True when none is running any more."""
        if self._thread is not None:
            self._thread.join(timeout)
        return self._thread is None or not self._thread.is_alive()

    def shutdown(self) -> None:
        """Stop and close the Dask client (and its LocalCluster) of this page."""
        self.stop()
        self.wait(30)
        if self._client is not None:
            sweep.close(self._client)
            self._client = None

    def __panel__(self):
        settings = pn.Param(self.param, show_name=False, width=300, widgets={
            "papers": pn.widgets.MultiChoice, "scheduler": {"placeholder": "tcp://host:8786"},
            "first_seed": pn.widgets.IntInput})  # a seed is typed, not slid over a million
        return pn.Row(
            pn.Column(settings, pn.Row(self._run_button, self._stop_button), width=320),
            pn.Column(self._alert, self._status, self._progress, self._dask_link,
                      pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width"),
            sizing_mode="stretch_width")


INTRO = """# Claim robustness over seeds

Every claim in this suite is tested on seeds 0 and 1. Here each paper's `claims(seed)` runs on
a range of seeds as Dask tasks; each bar is the share of seeds where a claim held, with its
Wilson 95% interval (blue: the suite expects the claim to hold; grey: it does not). Before a
Run the bars are the committed values (`benchmarks/claim_values.csv`), and beside each is the
estimate the paper's status uses with its verdict (✓/✗): `each` claims held on k/n seeds (>= 95%
holds), `mean` claims their mean, whose 95% BCa interval must clear the threshold (hover a bar
for the interval). The same sweep from a terminal:
`icml26 sweep recruitment promotion --seeds 0:32`."""


def create_app() -> pn.viewable.Viewable:
    pn.extension()
    perf.install()
    explorer = RobustnessExplorer()
    if pn.state.curdoc is not None and pn.state.curdoc.session_context is not None:
        # closing the cluster takes seconds: not on the server's event loop
        pn.state.on_session_destroyed(lambda _ctx: threading.Thread(
            target=explorer.shutdown, daemon=True).start())
    return pn.Column(pn.pane.Markdown(INTRO, sizing_mode="stretch_width"), explorer,
                     sizing_mode="stretch_width")


if __name__.startswith("bokeh"):
    create_app().servable()
