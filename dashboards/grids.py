"""Explorer for "See What Matters: Differentiable Grid Sample Pruning for Generalizable VLA"
(grids).

Live views: the analytic head FLOPs vs the number of tokens K (the chosen K marked), and the
layout of a scene (tool, contact point) with where each method starts reading: GridS's initial
grid (after margin), the average-pooling cells, the 16x16 token grid.  Behind the Run button
(with progress): the encoder (cached per seed), then the chosen method trained at K on the
frozen features: its contact-point error joins an error-vs-K chart of every Run of this
session, and its sampling points are drawn over a test scene.
The module also holds the plot functions the notebook uses for F1-F3.

Serve alone with ``panel serve dashboards/grids.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import math
from dataclasses import replace

import holoviews as hv
import numpy as np
import param
import torch

from icml26 import grids
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

METHOD_COLORS = {"full": "#7f7f7f", "grids": "#1f77b4", "topk": "#d62728",
                 "avgpool": "#2ca02c", "random": "#9467bd"}
METHOD_LABELS = {"full": "all tokens", "grids": "GridS", "topk": "learned top-K",
                 "avgpool": "average pool", "random": "random K"}


# --------------------------------------------------------------------------- plot functions
VALUE_LABELS = {"error_px": "contact error (px)",
                "success": "success (contact error < r)"}


def error_chart(rows: list[dict], title: str = "Contact-point error vs tokens kept",
                value: str = "error_px") -> Chart:
    """F1: mean contact-point error (px; ``value="success"``: the success rate at the run's
    radius, issue 46) vs log2 K, one curve per method; the all-tokens reference as a point at
    K = all the map's tokens (16; 256 in the first design) and a dashed level."""
    if value not in VALUE_LABELS:
        raise ValueError(f"value must be one of {list(VALUE_LABELS)}, got {value!r}")
    series = []
    for m in grids.METHODS:
        pts = sorted((math.log2(r["k"]), r[value]) for r in rows if r["method"] == m)
        if not pts or m == "full":
            continue
        x, y = zip(*pts)
        series += [Series(METHOD_COLORS[m], x, y, METHOD_LABELS[m]),
                   Series(METHOD_COLORS[m], x, y, kind="scatter")]
    full = [r for r in rows if r["method"] == "full"]
    if full:  # a point at K = all tokens (keeps a one-Run chart two points wide) and a dashed level
        series += [Series(METHOD_COLORS["full"], [math.log2(full[0]["k"])],
                          [full[0][value]], METHOD_LABELS["full"], kind="scatter"),
                   Series(METHOD_COLORS["full"], kind="hline", at=full[0][value],
                          dash="dashed")]
    return Chart(title, "log2 of tokens kept K", VALUE_LABELS[value], series)


def flops_chart(rows: list[dict], k: int | None = None) -> Chart:
    """F2: analytic head FLOPs vs K (log-log), the chosen K marked (its share of the FLOPs
    with all the run's tokens, the row whose ratio is 1)."""
    ks = [r["k"] for r in rows]
    fl = [r["flops"] for r in rows]
    series = [Series(METHOD_COLORS["grids"], ks, fl, "2-layer head, d = 32")]
    title = "Head FLOPs vs tokens"
    if k is not None:
        at = next(r for r in rows if r["k"] == k)
        series.append(Series("black", [k], [at["flops"]], f"K = {k}", kind="scatter"))
        n = next((r["k"] for r in rows if r["ratio"] == 1.0), max(ks))
        title = f"Head FLOPs: K = {k} costs {100 * at['ratio']:.1f}% of all {n} tokens"
    return Chart(title, "tokens K", "head FLOPs", series, x_log=True, y_log=True)


def coords_plot(data: dict, cols: int = 4) -> hv.Layout:
    """F3: test scenes with their contact point (green ring) and GridS's K points (cyan)."""
    panels = []
    for img, contact, pts in zip(data["images"], data["contact"], data["coords"]):
        rgb = hv.RGB(img.permute(1, 2, 0).numpy(), bounds=(0, 0, 64, 64),  # row 0 on top
                     kdims=["x (px)", "y (px, flipped)"])
        y = lambda v: 64 - np.asarray(v)  # noqa: E731 - image rows grow downwards
        panels.append((rgb * hv.Points((contact[:1].numpy() + 0.5, y(contact[1:2].numpy() + 0.5)))
                       .opts(marker="circle", size=14, fill_alpha=0, line_color="lime",
                             line_width=2)
                       * hv.Points((pts[:, 0].numpy() + 0.5, y(pts[:, 1].numpy() + 0.5)))
                       .opts(color="cyan", size=8, marker="x", line_width=3))
                      .opts(width=200, height=200, xaxis=None, yaxis=None))
    return hv.Layout(panels).cols(cols).opts(
        title=f"GridS@{data['k']}: sampling points (cyan x) vs contact point (green ring)")


LIVE_CAPTION = (
    "*Left:* analytic FLOPs of the 2-layer head, L (24 N d^2 + 4 N^2 d) with N = K + 1 "
    "(the query token), vs K. *Right:* one scene's tool (red) and contact point (green), "
    "GridS's initial points (blue: the cell centres of a grid inside the margin, on top of the "
    "average-pooling cells' centres, brown, when the margin is 0); y grows downwards in the "
    "image.")


# --------------------------------------------------------------------------- explorer
class GridsExplorer(ExplorerBase):
    """Choose a token budget and a selector; Run trains it on the frozen encoder."""

    k = param.Selector(default=4, objects=[1, 2, 4, 8, 16],
                       doc="Tokens kept K (the map has 16 tokens of 16 px; avgpool needs a "
                           "square K).")
    method = param.Selector(default="grids", objects=["grids", "topk", "avgpool", "random"],
                            doc="How the K tokens are chosen (GridS: continuous points from "
                                "the scout; top-K: learned saliency, straight-through).")
    margin = param.Number(0.0, bounds=(0.0, 0.3), step=0.02,
                          doc="Coordinate margin: points live in [m, 1 - m]^2.")
    coord_embed = param.Boolean(True, doc="Add the coordinate embedding 2 -> 64 -> d to "
                                          "each token (the code's optional embedding).")
    scout_input = param.Selector(default="tokens", objects=list(grids.SCOUT_INPUTS),
                                 doc="GridS scout's global feature: the code's LayerNorm + "
                                     "mean-pool of position-aware tokens ('tokens', the "
                                     "second design), the encoder's attention-pooled feature "
                                     "('map', the first) or of the bare map ('mean', "
                                     "stalls).")
    temperature = param.Number(1.0, bounds=(0.1, 10.0), softbounds=(0.2, 5.0), step=0.1,
                               doc="Coordinate temperature T in sigmoid(z / T).")
    noise_scale = param.Number(0.1, bounds=(0.0, 1.0), step=0.05,
                               doc="Exploration noise on the pooled feature while training "
                                   "(code: 0.1).")
    contact_radius = param.Number(1.5, bounds=(0.5, 4.0), step=0.25,
                                  doc="Contact disc radius in px (smaller = more precision "
                                      "needed).")
    clutter = param.Integer(6, bounds=(0, 20), doc="Distractor blobs per scene.")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the scenes and the training.")
    run = param.Event(doc="Pretrain (cached) and train the chosen method at K.")
    RUN_LABEL, LIVE_CAPTION = "Run training", LIVE_CAPTION

    RUN_STATE = ("_rows", "_result")  # what a Run keeps (the record too)

    def __init__(self, **params):
        self._rows: list[dict] = []  # every Run of this session (the last: self._result)
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def config(self) -> grids.GridsConfig:
        """The lib config of this setting (raises ValueError when invalid)."""
        base = grids.config_for("quick")
        if self.method == "avgpool" and math.isqrt(self.k) ** 2 != self.k:
            raise ValueError(f"avgpool needs a square K, got {self.k}")
        cfg = grids.with_policy(
            base, coord_embed=self.coord_embed, scout_input=self.scout_input,
            temperature=float(self.temperature), noise_scale=float(self.noise_scale),
            margin=float(self.margin))
        cfg = replace(cfg, scene=replace(cfg.scene, contact_radius=float(self.contact_radius),
                                         clutter=int(self.clutter)))
        cfg.validate()
        return cfg

    @param.depends("k", "method", "margin", "contact_radius", "clutter", "temperature",
                   "scout_input", "noise_scale", watch=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    @param.depends("k")
    def flops_live(self) -> Chart:
        """Analytic head FLOPs vs K, the chosen K marked."""
        return flops_chart(grids.figure_flops_data(grids.config_for("quick")), self.k)

    @param.depends("k", "margin", "contact_radius", "clutter", "seed")
    def layout_live(self) -> Chart:
        """One scene's tool and contact point, and where each selector starts reading."""
        scene = grids.SceneConfig(contact_radius=float(self.contact_radius),
                                  clutter=int(self.clutter))
        _, act = grids.make_scenes(scene, 1, torch.Generator().manual_seed(self.seed))
        cx, cy, th = act[0].tolist()
        # the untrained scout's start points at this seed (its init draws from torch's global
        # RNG: forked, so a redraw shows the same points and leaves the global state alone)
        with torch.random.fork_rng(devices=[]), torch.no_grad():
            torch.manual_seed(self.seed)
            scout = grids.Scout(32, self.k, margin=float(self.margin))
            start = grids.to_px(grids.config_for("quick"),
                                scout(torch.zeros(1, 4, 4, 32)))[0].numpy()
        side = math.isqrt(self.k)
        cells = (np.arange(side) + 0.5) * 64 / side - 0.5
        gx, gy = np.meshgrid(cells, cells)
        return Chart(f"Scene layout, K = {self.k}", "x (px)", "y (px)", [
            Series("#d62728", [cx, cx - 14 * math.cos(th)], [cy, cy - 14 * math.sin(th)],
                   "tool"),
            Series("#2ca02c", [cx], [cy], "contact", kind="scatter"),
            Series("#8c564b", gx.ravel(), gy.ravel(), "pool cells", kind="scatter"),
            Series(METHOD_COLORS["grids"], start[:, 0], start[:, 1], "GridS start",
                   kind="scatter")], height=320, geometry=True)

    def live_charts(self) -> list:
        return [self.flops_live, self.layout_live]

    # ------------------------------------------------------------------ Run results
    @run_chart
    def errors_run(self) -> Chart | None:
        """Contact-point error of every Run of this session vs K (after Run)."""
        return error_chart(self._rows, "Contact error of this session's Runs")

    @run_chart
    def points_run(self) -> Chart | None:
        """The last Run's reading points on test scene 0 with its contact point."""
        r = self._result
        pts, contact = r["coords"], r["contact"]
        return Chart(f"{METHOD_LABELS[r['method']]}@{r['k']}: where it reads",
                     "x (px)", "y (px)", [
                         Series("#2ca02c", [contact[0]], [contact[1]], "contact",
                                kind="scatter"),
                         Series(METHOD_COLORS[r["method"]], pts[:, 0], pts[:, 1],
                                "tokens read", kind="scatter")], height=320, geometry=True)

    def run_charts(self) -> list:
        return [self.errors_run, self.points_run]

    def plot_data(self) -> dict:
        data = super().plot_data()
        data["runs"] = list(self._rows)
        return data

    def result_note(self) -> str:
        if self._result is None:
            return ("**Train a selector:** press **Run** (the encoder is pretrained once per "
                    "seed and cached; the cost: under the Run button).")
        r = self._result
        return (f"**{METHOD_LABELS[r['method']]} at K = {r['k']}** ({r['settings']}): contact "
                f"error {r['error_px']:.2f} px (median {r['median_px']:.2f}), success "
                f"(< {r['radius_px']:.1f} px, the all-tokens model's median validation error) "
                f"{r['success']:.2f}, angle error {r['angle_deg']:.0f} deg; all tokens: "
                f"{r['full_px']:.2f} px, success {r['full_success']:.2f}. Dashed line: all "
                "tokens.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed, method, k = self.seed, self.method, self.k
        got: dict = {}

        def feats():
            got["feats"] = grids.features(cfg, seed)
            return got["feats"]

        def train():
            return grids.run_policy(cfg, method, k, seed, got["feats"])

        def keep(results):
            f, row = results
            full = grids.readout_row(cfg, f)
            radius = grids.success_radius(cfg, full)
            full, row = grids.with_success(full, radius), grids.with_success(row, radius)
            n0 = f["n_train"]
            settings = (f"seed {seed}, clutter {cfg.scene.clutter}, contact radius "
                        f"{cfg.scene.contact_radius:g} px")
            self._rows = [r for r in self._rows if (r["method"], r["k"]) != (method, k)
                          and r["method"] != "full"] + [full, row]
            self._result = {**row, "full_px": full["error_px"],
                            "full_success": full["success"], "settings": settings,
                            "coords": row["coords_px"][0].numpy(),
                            "contact": f["act"][n0, :2].numpy()}

        self.run_stages([
            (f"scenes and encoder (seed {seed}, cached after the first Run)", feats),
            (f"{METHOD_LABELS[method]} at K = {k}: {cfg.head_steps} training steps", train),
        ], keep)


Explorer = GridsExplorer
create_app = app_factory(Explorer, (
    "## GridS: differentiable grid-sample token pruning (grids)\n\n"
    "Feng, Zhao, Ma, Xia, Du, Wang & Xu, *See What Matters: Differentiable Grid Sample "
    "Pruning for Generalizable VLA*, ICML 2026 "
    "([arXiv 2605.11817](https://arxiv.org/abs/2605.11817)). Live: head FLOPs vs K and "
    "where each selector starts reading; **Run** trains the chosen selector at K on the "
    "frozen encoder of a synthetic manipulation toy."))

if __name__.startswith("bokeh"):
    create_app().servable()
