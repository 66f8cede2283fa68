"""Explorer for "GSRQ: Gain-Shape Residual Quantization for Sub-1-bit KV Cache" (gsrq).

Live: the rate of the chosen code and a 2-D picture of k-means shrinkage (``toy_codes``:
:data:`TOY_CODES_WHY`); Run: RQ-kmeans and this GSRQ on synthetic KV-like vectors, stage by
stage; the notebook's F1-F4. Serve: ``panel serve dashboards/gsrq.py`` / ``icml26 serve``.
"""

from __future__ import annotations

import functools
import math

import holoviews as hv
import numpy as np
import param
import torch

from icml26 import gsrq
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot, run_chart

VARIANT_COLORS = {"RQ-kmeans": "#d62728", "GSRQ (cluster gain)": "#1f77b4",
                  "GSRQ (per-token gain)": "#2ca02c", "fp32 cache": "#7f7f7f",
                  gsrq.EQUAL_RATE: "#8c564b"}
SPEC_BITS = (0.0625, 0.125, 0.25, 0.5, 1.0)  # the spec's bit grid, labelled 1/16 ... 1
BIT_LABELS = {b: f"1/{round(1 / b)}" if b < 1 else f"{b:g}" for b in (*SPEC_BITS, 2.0)}
# the LM's recall curves coincide where quantization does not move recall: a dash each
LM_DASH = {"GSRQ (cluster gain)": "dashed", "GSRQ (per-token gain)": "dotted"}


# --------------------------------------------------------------------------- plot functions
def shrinkage_plot(rows: list[dict]) -> hv.Overlay:
    """F1: mean ||x_hat|| / ||x|| of one-stage k-means vs d, one curve per K."""
    curves = []
    for k in sorted({r["K"] for r in rows}):
        pts = sorted((r["dim"], r["norm_ratio"]) for r in rows if r["K"] == k)
        curves.append(hv.Curve(pts, "dimension d", "mean ||x_hat|| / ||x||", label=f"K={k}")
                      * hv.Scatter(pts, "dimension d", "mean ||x_hat|| / ||x||"))
    line = hv.HLine(1.0).opts(color="grey", line_dash="dashed")
    return hv.Overlay([*curves, line]).opts(
        title="k-means reconstructions shrink (one stage)", logx=True, min_height=300,
        xticks=[(d, str(d)) for d in sorted({r["dim"] for r in rows})],
        legend_position="bottom_left", responsive=True)


def rate_distortion_plot(rows: list[dict], metric: str = "cos") -> hv.Layout:
    """F2: ``metric`` ("cos" or "rel_l2") vs bits per element, one panel per data setting."""
    ylabel = {"cos": "mean cosine", "rel_l2": "relative l2 (squared)",
              "norm_ratio": "mean ||x_hat|| / ||x||"}[metric]
    bits = sorted({r["bits"] for r in rows})
    ticks = [(b, f"{b:g}") for b in SPEC_BITS if bits and bits[0] / 1.01 <= b <= bits[-1] * 1.01]
    panels = []
    for setting in dict.fromkeys(r["data"] for r in rows):
        layers = []
        for label in gsrq.VARIANTS:
            for k in sorted({r["K"] for r in rows}):
                pts = sorted((r["bits"], r[metric]) for r in rows
                             if r["data"] == setting and r["variant"] == label and r["K"] == k)
                if not pts:
                    continue
                dash = "solid" if k == max(r["K"] for r in rows) else "dotted"
                layers.append(hv.Curve(pts, "bits per element", ylabel,
                                       label=f"{label}, K={k}").opts(
                    color=VARIANT_COLORS[label], line_dash=dash))
        panels.append(hv.Overlay(layers).opts(
            title=f"{setting} data", logx=True, legend_position="bottom_right",
            xticks=ticks or None, responsive=True, min_height=320, show_legend=not panels))
    return hv.Layout(panels).cols(2)


def tiny_lm_plot(rows: list[dict]) -> hv.Layout:
    """F3: perplexity and key-recall accuracy of the tiny LM vs bits of its K/V cache; dashed:
    the fp32 cache (the ceiling), dotted: chance (recall on 0-1); a diamond: equal-rate RQ."""
    base = next(r for r in rows if r["variant"] == "fp32 cache")
    bits = sorted({r["bits"] for r in rows if r["stages"]})
    ticks = [(b, t) for b, t in BIT_LABELS.items() if bits[0] / 1.01 <= b <= bits[-1] * 1.5]
    panels = []
    # titles name the metric only (a longer one was cut off); the caption names the lines
    for metric, ylabel in (("ppl", "perplexity"), ("passkey", "key-recall digit accuracy")):
        layers = []  # the curves first: an overlay takes its axis names from its first layer
        for label in (*gsrq.VARIANTS, gsrq.EQUAL_RATE):
            pts = sorted((r["bits"], r[metric]) for r in rows if r["variant"] == label)
            marker = dict(marker="diamond", size=11) if label == gsrq.EQUAL_RATE else {}
            layers += [hv.Curve(pts, "bits per element", ylabel, label=label).opts(
                color=VARIANT_COLORS[label], line_dash=LM_DASH.get(label, "solid")),
                hv.Scatter(pts, "bits per element", ylabel)
                .opts(color=VARIANT_COLORS[label], **marker)] if pts else []
        layers += [hv.HLine(base[metric]).opts(color=VARIANT_COLORS["fp32 cache"],
                                               line_dash="dashed")] + ([hv.HLine(
            base["chance"]).opts(color="black", line_dash="dotted")] if metric == "passkey"
            and "chance" in base else [])
        panels.append(hv.Overlay(layers).opts(
            title=f"tiny LM: {ylabel}", logx=True, xticks=ticks or None,
            responsive=True, min_height=300, logy=metric == "ppl", legend_position="top_right",
            **({"ylim": (0, 1.02), "show_legend": False} if metric == "passkey" else {})))
    return hv.Layout(panels).cols(2)


def benchmark_plot(df) -> hv.Element:
    """F4: achieved GB/s of the assignment vs N, per implementation and K (GPU CSV)."""
    if df is None or len(df) == 0:
        return message_plot("No GPU benchmark recorded yet:\nrun "
                            "kernels/bench/bench_gain_shape_assign.py on a CUDA machine")
    if "op" in df:
        df = df[df["op"] == "assign"]
    if "timestamp" in df and len(df):
        df = df[df["timestamp"] == df["timestamp"].max()]  # the latest recorded run
    layers = []
    for (impl, k), grp in df.groupby(["impl", "K"]):
        grp = grp.sort_values("N")
        layers.append(hv.Curve((grp["N"], grp["gbps"]), "N rows", "GB/s",
                               label=f"{impl}, K={k}"))
    if "bound_gbps" in df:
        layers.append(hv.HLine(float(df["bound_gbps"].max())).opts(color="grey",
                                                                    line_dash="dashed"))
    return hv.Overlay(layers).opts(title="Fused assignment throughput (dashed: HBM bound)",
                                   logx=True, legend_position="bottom_right",
                                   responsive=True, min_height=300)


# --------------------------------------------------------------------------- toy (2-D)
TOY_N = 240
#: Why the 2-D picture's default K is 4 (fixed from the mechanism, not by looking at seeds):
TOY_CODES_WHY = (
    "K of the 2-D picture. In 2-D, K codewords cost log2(K)/2 bits per coordinate: K = 4 "
    "is 1 bit, the edge of the paper's sub-1-bit regime. On equal-norm points a k-means "
    "cell spans ~360/K degrees and its centroid's length is the mean cosine to it, "
    "sin(pi/K)/(pi/K) for uniform angles: 0.90 at K = 4 (0.907 on this picture's "
    "anisotropic ring, N = 40000), 0.99 at K = 16 (2 bits), where the shrinkage is 1% of "
    "the radius and invisible. K = 2 (0.74) would leave two centroids only.")


@functools.lru_cache(maxsize=128)
def _toy(n_codes: int, norm_tail: float, weight_exponent: float, rule: str, gain: str,
         seed: int) -> dict:
    """2-D points (equal norms times a lognormal factor) and two fitted one-stage codebooks."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(TOY_N, 2, generator=g) * torch.tensor([1.0, 0.6])
    x = z / z.norm(dim=1, keepdim=True)
    if norm_tail > 0:
        x = x * torch.exp(norm_tail * torch.randn(TOY_N, 1, generator=g))
    out = {"x": x.numpy()}
    for name, cfg in (("kmeans", gsrq.QuantConfig(n_codes=n_codes, stages=1, method="kmeans",
                                                  iters=10)),
                      ("gskm", gsrq.QuantConfig(n_codes=n_codes, stages=1, gain=gain, rule=rule,
                                                weight_exponent=weight_exponent, iters=10))):
        res = gsrq.fit_rq(x, cfg, torch.Generator().manual_seed(seed + 1))
        st = res.stages[0]
        out.update({name: (st.gains[:, None] * st.shapes).numpy(),
                    f"{name}_shapes": st.shapes.numpy(), f"{name}_recon": res.recon.numpy(),
                    f"{name}_metrics": res.metrics[0]})
    return out


LIVE_CAPTION = (
    "*Left:* bits per element M log2 K / d (+ gain_bits / d with a per-token gain) vs the "
    "number of stages M; dotted: the spec's bit grid 1/16 ... 1. *Right:* k-means shrinkage "
    "in 2-D: points of nearly equal norm (dashed: the unit circle) and one stage of K "
    "codewords (*K of the 2-D picture*, default 4 = 1 bit per coordinate): the k-means "
    "centroids (red) sit visibly inside the ring, at the mean cosine of their cell (title: "
    "mean ||x_hat|| / ||x||, about 0.91 at K = 4; at K = 16 only 0.99, invisible), while "
    "GSKM's unit shapes s_k (blue) keep the directions on it. GSKM's l2-optimal gain "
    "g_k = mean <x, s_k> equals the centroid's length on equal-norm points, so its codewords "
    "g_k s_k coincide with the red centroids here: the gain absorbs the shrinkage and the "
    "shape carries the direction.")


# --------------------------------------------------------------------------- explorer
class GSRQExplorer(ExplorerBase):
    """Choose a code; watch k-means shrink and gain-shape codewords keep direction."""

    n_codes = param.Selector(default=256, objects=[2, 4, 8, 16, 32, 64, 128, 256],
                             doc="Codebook size K per stage (log2 K bits per vector per stage; "
                                 "the 2-D picture has its own K).")
    stages = param.Integer(4, bounds=(1, 16),
                           doc="Residual stages M (rate M log2 K / d bits per element).")
    dim = param.Selector(default=128, objects=[16, 32, 64, 128, 256],
                         doc="Group size d: the length of each quantized vector (head dim).")
    gain_mode = param.Selector(default="cluster", objects=list(gsrq.GAIN_MODES),
                               doc="GSRQ gain: one per codeword ('cluster') or a per-token "
                                   "log-gain code on stage 1 ('token', +gain_bits/d bits).")
    rule = param.Selector(default="cos", objects=list(gsrq.RULES),
                          doc="GSKM assignment: argmax cos(x, s_k) or the l2 rule "
                              "argmax 2 g_k <x, s_k> - g_k^2 (with a per-token gain: for "
                              "stages >= 2 only).")
    weight_exponent = param.Number(0.0, bounds=(-1.0, 2.0), step=0.1,
                                   doc="p in the shape update normalize(sum ||x||^p x/||x||): "
                                       "0 = directional mean, 1 = direction of the plain mean.")
    norm_tail = param.Number(0.0, bounds=(0.0, 1.5), step=0.05,
                             doc="Sigma of the lognormal per-token norm factor (0 = equal "
                                 "norms; the spec's heavy tail is 0.8).")
    gain_bits = param.Integer(4, bounds=(1, 8),
                              doc="Width of the per-token gain code (gain mode 'token').")
    n_samples = param.Integer(4096, bounds=(1024, 16384), step=1024,
                              doc="Synthetic vectors quantized by Run (the claims use 8192).")
    toy_codes = param.Selector(default=4, objects=[2, 4, 8, 16], doc=TOY_CODES_WHY,
                               label="K of the 2-D picture")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the data and codebook seeding.")
    run = param.Event(doc="Quantize synthetic KV-like data with RQ-kmeans and this GSRQ.")
    RUN_LABEL, LIVE_CAPTION = "Run quantization", LIVE_CAPTION

    def config(self) -> gsrq.QuantConfig:
        """The lib config of the GSRQ quantizer (raises ValueError when invalid)."""
        cfg = gsrq.QuantConfig(n_codes=self.n_codes, stages=self.stages, method="gskm",
                               gain=self.gain_mode, rule=self.rule,
                               weight_exponent=self.weight_exponent, gain_bits=self.gain_bits)
        cfg.validate()
        return cfg

    def data_config(self) -> gsrq.KVDataConfig:
        cfg = gsrq.KVDataConfig(n=self.n_samples, dim=self.dim, norm_tail=self.norm_tail)
        cfg.validate()
        return cfg

    def bits(self) -> float:
        return gsrq.bits_per_element(self.n_codes, self.stages, self.dim, self.gain_mode,
                                     self.gain_bits)

    def plot_data(self) -> dict:
        """The numbers behind the views."""
        m, toy = np.arange(1, 17), self._toy()
        data = {"stages": m, "bits": self.bits(), **{
            f"bits_{gain}": np.array([gsrq.bits_per_element(self.n_codes, int(s), self.dim,
                                                            gain, self.gain_bits) for s in m])
            for gain in ("cluster", "token")},
            "toy_points": toy["x"], "toy_kmeans": toy["kmeans"], "toy_gskm": toy["gskm"],
            "toy_gskm_shapes": toy["gskm_shapes"]}
        if self._result is not None:
            data["rq"] = self._result["rows"]
        return data

    # Live figures: one function per figure returning a Chart (dashboards/app/live.py), drawn
    # once and updated in place; axes follow the data, legends sit above the frame.
    @param.depends("n_codes", "stages", "dim", "gain_mode", "gain_bits")
    def bits_chart(self) -> Chart:
        """Bits per element vs stages for this K and d (the readout in the title); dotted:
        the spec's bit grid. The rate is linear in M, so the axis is linear."""
        d = self.plot_data()
        key = "bits_token" if self.gain_mode == "token" else "bits_cluster"
        grid = [Series("lightgrey", kind="hline", at=b, dash="dotted", width=1) for b in SPEC_BITS]
        # legend labels stay fixed (the numbers are in the title): a live update rewrites
        # titles and data, and a relabelled legend item showed "Invalid field" in Bokeh
        return Chart(f"Rate: {d['bits']:.4g} bits per element (M = {self.stages})",
                     "stages M", "bits per element", [
                         *grid,
                         Series(VARIANT_COLORS["GSRQ (cluster gain)"], d["stages"], d[key],
                                "rate of the chosen K, d and gain"),
                         Series("black", [self.stages], [d["bits"]], "chosen M",
                                kind="scatter")])

    def _toy(self) -> dict:
        return _toy(self.toy_codes, round(self.norm_tail, 4), round(self.weight_exponent, 4),
                    self.rule, self.gain_mode, self.seed)

    @param.depends("toy_codes", "norm_tail", "weight_exponent", "rule", "gain_mode", "seed")
    def toy_chart(self) -> Chart:
        """2-D: points, k-means centroids (shrunk inside the ring; drawn on top), GSKM's unit
        shapes (on it)."""
        toy, theta = self._toy(), np.linspace(0, 2 * math.pi, 200)
        return Chart(f"K = {self.toy_codes} in 2-D: k-means norm ratio "
                     f"{toy['kmeans_metrics']['norm_ratio']:.2f}", "coordinate x1",
                     "coordinate x2", [
                         Series("lightgrey", np.cos(theta), np.sin(theta), dash="dashed",
                                width=1),
                         Series("#aaaaaa", toy["x"][:, 0], toy["x"][:, 1], "points",
                                kind="scatter"),
                         Series(VARIANT_COLORS["GSRQ (cluster gain)"],
                                toy["gskm_shapes"][:, 0], toy["gskm_shapes"][:, 1],
                                "GSKM shapes s_k", kind="scatter"),
                         Series(VARIANT_COLORS["RQ-kmeans"], toy["kmeans"][:, 0],
                                toy["kmeans"][:, 1], "k-means centroids", kind="scatter")],
                     height=320, geometry=True)

    def live_charts(self) -> list:
        return [self.bits_chart, self.toy_chart]

    def _rq_chart(self, metric: str, title: str, y_label: str) -> Chart:
        rows = self._result["rows"]
        series = []
        for label, color in (("RQ-kmeans", VARIANT_COLORS["RQ-kmeans"]),
                             ("GSRQ", VARIANT_COLORS["GSRQ (cluster gain)"])):
            x = [r["bits"] for r in rows if r["variant"] == label]
            y = [r[metric] for r in rows if r["variant"] == label]
            series += [Series(color, x, y, label), Series(color, x, y, kind="scatter")]
        return Chart(title, "bits per element", y_label, series)

    # the Run's results: two figures drawn when a Run ends (run_done), then updated in place
    @run_chart
    def cos_chart(self) -> Chart | None:
        """Per-stage mean cosine of RQ-kmeans and the configured GSRQ (after Run)."""
        return self._rq_chart("cos", "Direction kept", "mean cosine")

    @run_chart
    def l2_chart(self) -> Chart | None:
        """Per-stage relative squared l2 error of RQ-kmeans and the GSRQ (after Run)."""
        return self._rq_chart("rel_l2", "Reconstruction error", "relative l2 (squared)")

    def run_charts(self) -> list:
        return [self.cos_chart, self.l2_chart]

    def result_note(self) -> str:
        """The caption of the Run's figures: the settings they were computed at."""
        if self._result is None:
            return ("**Residual quantization of synthetic KV-like data:** press **Run** "
                    "(RQ-kmeans and this GSRQ, stage by stage).")
        return ("**Residual quantization of synthetic KV-like data** (one point per stage, "
                f"in-sample): {self._result['title']}.")

    @param.depends("run", watch=True)
    def _run(self) -> None:
        configs = self.run_config(lambda: (self.config(), self.data_config()))
        if configs is None:
            return
        (qcfg, dcfg), seed = configs, self.seed
        data: dict = {}

        def make_data():
            data["x"] = gsrq.make_kv_data(dcfg, gsrq.data_generator(seed))
            return data["x"]

        def fit(cfg):  # k-means++ seeding from the lib's fit generator (10_007 + seed)
            return gsrq.fit_rq(data["x"], cfg, gsrq.fit_generator(seed)).metrics

        kmeans = gsrq.QuantConfig(n_codes=qcfg.n_codes, stages=qcfg.stages, method="kmeans")

        def keep(results):
            _, km, gs = results
            self._result = {
                "rows": [{"variant": "RQ-kmeans", **m} for m in km]
                + [{"variant": "GSRQ", **m} for m in gs],
                "title": f"K = {qcfg.n_codes}, M = {qcfg.stages}, d = {dcfg.dim}, "
                         f"{qcfg.gain} gain, {qcfg.rule} rule, norm tail {dcfg.norm_tail:g}, "
                         f"N = {dcfg.n}, seed {seed}"}

        self.run_stages([(f"synthetic KV-like data ({dcfg.n} vectors of d = {dcfg.dim}, norm "
                           f"tail {dcfg.norm_tail:g})", make_data),
            (f"RQ-kmeans: {qcfg.stages} stages of K = {qcfg.n_codes}", lambda: fit(kmeans)),
            (f"GSRQ ({qcfg.gain} gain, {qcfg.rule} rule): {qcfg.stages} stages of "
             f"K = {qcfg.n_codes}", lambda: fit(qcfg)),
        ], keep)


Explorer = GSRQExplorer
create_app = app_factory(Explorer, (
    "## GSRQ: gain-shape residual quantization (gsrq)\n\n"
    "Kim, Park, Chung & Chung, *GSRQ: Gain-Shape Residual Quantization for Sub-1-bit KV "
    "Cache*, ICML 2026 ([arXiv 2607.01065](https://arxiv.org/abs/2607.01065)). Live: the rate "
    "of the code and 2-D k-means shrinkage; **Run** quantizes KV-like vectors stage by stage."))

if __name__.startswith("bokeh"):
    create_app().servable()
