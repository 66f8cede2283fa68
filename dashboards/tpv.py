"""Explorer for "Parameter Perturbations Through the Lens of Test Prediction Variance" (tpv).

**Run** trains one MLP student on a synthetic teacher (cached on disk) and collects its
per-sample Jacobian statistics on the training and test inputs, plus a Monte Carlo
quantization TPV for every bit width. After that every view is analytic: moving the bits, the
label-noise sd and ridge, or the SGD learning rate and batch only rescales trace forms
``Tr(H_eff C)``, so the sliders answer at once.

Views: TPV on training inputs against TPV on test inputs (log-log, with y = x) for the chosen
perturbation (per-neuron JBR points for pruning); quantization TPV against bits, trace form
against Monte Carlo; a table of train/test values and ratios.

Serve alone with ``panel serve dashboards/tpv.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import functools

import holoviews as hv
import numpy as np
import panel as pn
import param
import torch

from icml26 import tpv
from icml26.dashboards.app import ExplorerBase, paper_page

N_TEST = 2000  # test inputs per student in the app (the paper's scripts use 5000)
MC_INPUTS = 256  # training inputs for the Monte Carlo quantization TPV
MC_DRAWS = 64  # noise draws per bit width
BITS = tuple(range(2, 13))  # Monte Carlo bit widths computed on Run
UNTRAINED_INPUTS = 500  # inputs per split for the live view of the untrained student
COLORS = {"quant": "#1f77b4", "sgd": "#ff7f0e", "label": "#2ca02c", "prune": "#9467bd"}
LABELS = {"quant": "quantization", "sgd": "SGD noise", "label": "label noise",
          "prune": "pruning (JBR)"}


_ANALYSES: dict[tuple, dict] = {}  # (teacher, width, depth, n_train, seed) -> analysis
_MAX_ANALYSES = 8


def analyse_student(teacher: str, width: int, depth: int, n_train: int, seed: int) -> dict:
    """Train (or load) one student and collect what every live view needs (kept in memory
    for the last few students; the trained weights are also on disk via icml26.common.cached)."""
    key = (teacher, width, depth, n_train, seed)
    if key not in _ANALYSES:
        model, data, info = tpv.train_student(teacher, width, depth, n_train, seed,
                                              n_test=N_TEST)
        _ANALYSES[key] = {
            "info": info, "curv": tpv.curvature(model, data),
            "mc": tpv.quant_bits_rows(model, data["X_train"][:MC_INPUTS], BITS, MC_DRAWS,
                                      seed)}
        while len(_ANALYSES) > _MAX_ANALYSES:
            _ANALYSES.pop(next(iter(_ANALYSES)))
    return _ANALYSES[key]


@functools.lru_cache(maxsize=64)
def untrained_traces(teacher: str, width: int, depth: int, n_train: int,
                     seed: int) -> tuple[float, float, float]:
    """``Tr H_eff`` on (at most ``UNTRAINED_INPUTS`` of) the train and test inputs and the
    weight range of the student at its initialisation (the exact starting point of
    :func:`icml26.tpv.train_student`): a live view before Run, one batched Jacobian pass."""
    data = tpv.teacher_data(teacher, 20, n_train, N_TEST, seed)
    g = torch.Generator().manual_seed(7919 * seed + 31 * width + depth)
    model = tpv.MLP.build(20, width, depth, generator=g)
    tr = [float(tpv.layer_factors(model, data[k][:UNTRAINED_INPUTS]).sq_norms().double().mean())
          for k in ("X_train", "X_test")]
    w = tpv.flat_params(model)
    return tr[0], tr[1], float(w.max() - w.min())


class TPVExplorer(ExplorerBase):
    """Train a student, then perturb it: TPV on training inputs vs on test inputs."""

    teacher = param.Selector(default="multi_relu", objects=list(tpv.TEACHERS),
                             doc="Synthetic teacher: sum of 10 ReLUs, linear, or one ReLU.")
    width = param.Integer(32, bounds=(1, 256), doc="Hidden width of the student MLP.")
    depth = param.Integer(3, bounds=(2, 4),
                          doc="Linear layers of the student (3 = two hidden layers).")
    n_train = param.Integer(1000, bounds=(10, 1000), softbounds=(10, 1000), step=10,
                            doc="Training inputs (the paper contrasts 10 and 1000).")
    perturbation = param.Selector(default="quant", objects=list(tpv.PERTURBATIONS),
                                  doc="Which parameter noise to show: SGD noise, b-bit "
                                      "quantization, label noise, or removing single neurons.")
    bits = param.Integer(8, bounds=(1, 16), doc="Quantization bits b (delta = range/(2^b-1)).")
    label_sigma = param.Number(0.01, bounds=(0.001, 0.1), step=0.001,
                               doc="Sd of the Gaussian label noise (paper: 0.005, 0.01).")
    label_lambda = param.Number(0.1, bounds=(0.001, 10.0), softbounds=(0.001, 1.0), step=0.001,
                                doc="Proximity (ridge) penalty of the label-noise refits.")
    sgd_lr = param.Number(1e-3, bounds=(1e-4, 0.1), softbounds=(1e-4, 1e-2), step=1e-4,
                          doc="SGD learning rate (C = lr/2B Hess L; paper: 1e-3, 5e-4).")
    sgd_batch = param.Integer(32, bounds=(1, 1000), softbounds=(1, 256),
                              doc="SGD batch size B (paper: 32, 128).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the teacher, data and init.")
    run = param.Event(doc="Train the student and compute its Jacobian statistics.")

    INVALID_EXAMPLES = ()  # every in-bounds combination is valid

    def __init__(self, **params):
        self._progress = pn.indicators.Progress(active=False, visible=False,
                                                sizing_mode="stretch_width")
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def config(self) -> tpv.TPVConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        cfg = tpv.TPVConfig(widths=(self.width,), depths=(self.depth,), teachers=(self.teacher,),
                            n_trains=(self.n_train,), n_test=N_TEST, bits=self.bits,
                            sgd_lr=self.sgd_lr, sgd_batch=self.sgd_batch,
                            label_sigma=self.label_sigma, label_lambda=self.label_lambda,
                            claim_teacher=self.teacher, claim_depth=self.depth)
        cfg.validate()
        return cfg

    def _key(self) -> tuple:
        return (self.teacher, self.width, self.depth, self.n_train, self.seed)

    def _analysis(self) -> dict | None:
        """The analysis of the current student if Run has computed it in this process."""
        return _ANALYSES.get(self._key())

    def plot_data(self) -> dict:
        """The numbers behind the views. Before Run for these settings: the quantization
        trace form of the untrained student (``trained`` False, no table)."""
        bits = np.arange(1, 17)
        an = self._analysis()
        if an is None:
            tr, te, rng = untrained_traces(*self._key())
            sig2 = (rng / (2.0**bits - 1)) ** 2 / 12
            now = (rng / (2.0**self.bits - 1)) ** 2 / 12
            empty = np.zeros(0)
            points = {p: np.zeros((0, 2)) for p in tpv.PERTURBATIONS}
            points["quant"] = np.array([[now * tr, now * te]])
            return {"trained": False, "points": points, "bits": bits,
                    "trace_train": sig2 * tr, "trace_test": sig2 * te, "mc_bits": empty,
                    "mc": empty, "mc_trace": empty, "table": []}
        curv = an["curv"]
        forms = tpv.trace_forms(curv, self.bits, self.sgd_lr, self.sgd_batch,
                                self.label_sigma, self.label_lambda)
        points = {p: np.array([[forms[f"{p}_train"], forms[f"{p}_test"]]])
                  for p in ("quant", "sgd", "label")}
        points["prune"] = np.concatenate(
            [np.stack([tr.numpy(), te.numpy()], 1)
             for tr, te in zip(curv.neuron["train"], curv.neuron["test"])]).astype(float)
        rng = curv.w_max - curv.w_min
        sig2 = (rng / (2.0**bits - 1)) ** 2 / 12
        mc = an["mc"]
        table = [{"perturbation": LABELS[p], "train": float(points[p][:, 0].sum()),
                  "test": float(points[p][:, 1].sum()),
                  "ratio": float(points[p][:, 0].sum() / max(points[p][:, 1].sum(), 1e-300))}
                 for p in tpv.PERTURBATIONS]
        return {"trained": True, "points": points, "bits": bits,
                "trace_train": sig2 * curv.trace_heff["train"],
                "trace_test": sig2 * curv.trace_heff["test"],
                "mc_bits": np.array([r["bits"] for r in mc], dtype=float),
                "mc": np.array([r["mc"] for r in mc]),
                "mc_trace": np.array([r["trace"] for r in mc]), "table": table}

    # ------------------------------------------------------------------ views
    def _message_plot(self, text: str) -> hv.Element:
        return hv.Text(0.5, 0.5, text).opts(xaxis=None, yaxis=None, toolbar=None,
                                            responsive=True, min_height=320)

    @param.depends("teacher", "width", "depth", "n_train", "seed", "perturbation", "bits",
                   "label_sigma", "label_lambda", "sgd_lr", "sgd_batch", "run")
    def tpv_view(self) -> hv.Overlay | hv.Element:
        """TPV on training inputs vs on test inputs for the chosen perturbation (log-log)."""
        d = self.plot_data()
        shown = self.perturbation if d["trained"] else "quant"
        pts = d["points"][shown]
        pts = pts[(pts > 0).all(1)]  # a neuron dead on one split has TPV 0: off a log axis
        lo = float(pts.min()) / 2 if pts.size and pts.min() > 0 else 1e-12
        hi = float(pts.max()) * 2 if pts.size else 1.0
        line = hv.Curve([(lo, lo), (hi, hi)], "TPV (train inputs)", "TPV (test inputs)",
                        label="y = x").opts(color="grey", line_dash="dashed")
        what = ("one point per hidden neuron (du = -w_g)" if shown == "prune"
                else "trace form Tr(H_eff C)")
        title = f"{LABELS[shown]}: {what}"
        if not d["trained"]:
            title = "UNTRAINED student, quantization (press Run to train)"
        scatter = hv.Scatter(pts, "TPV (train inputs)", "TPV (test inputs)",
                             label=LABELS[shown]).opts(color=COLORS[shown], size=8)
        return (line * scatter).opts(logx=True, logy=True, title=title,
                                     legend_position="top_left", responsive=True,
                                     min_height=320)

    @param.depends("teacher", "width", "depth", "n_train", "seed", "bits", "run")
    def bits_view(self) -> hv.Overlay | hv.Element:
        """Quantization TPV vs bits: trace form (train, test) and Monte Carlo (F2)."""
        d = self.plot_data()
        if not d["trained"]:
            return plot_quant_bits_curves(d["bits"], d["trace_train"], None, self.bits).opts(
                title="UNTRAINED student: trace form vs bits (Run adds Monte Carlo)")
        return plot_quant_bits_curves(d["mc_bits"], d["mc_trace"], d["mc"], self.bits)

    @param.depends("teacher", "width", "depth", "n_train", "seed", "bits", "label_sigma",
                   "label_lambda", "sgd_lr", "sgd_batch", "run")
    def table_view(self) -> hv.Table | hv.Element:
        """Train and test TPV of every perturbation, and their ratio."""
        d = self.plot_data()
        if not d["table"]:
            return self._message_plot("")
        an = self._analysis()
        info = an["info"]
        rows = [(r["perturbation"], f"{r['train']:.3e}", f"{r['test']:.3e}",
                 f"{r['ratio']:.3f}") for r in d["table"]]
        rows.append(("student MSE train/test", f"{info['loss_train']:.4f}",
                     f"{info['loss_test']:.4f}", f"gap {info['gap']:.4f}"))
        return hv.Table(rows, ["TPV of", "train inputs", "test inputs", "train / test"]).opts(
            width=640, height=200)

    @param.depends("run", watch=True)
    def _run(self) -> None:
        try:
            self.config()
        except ValueError as e:
            self._alert.object, self._alert.visible = str(e), True
            return
        self._progress.visible, self._progress.active = True, True
        try:
            analyse_student(*self._key())
            self._alert.visible = False
        except Exception as e:  # noqa: BLE001 - never kill the server from a callback
            self._alert.object, self._alert.visible = f"Run failed: {e}", True
        finally:
            self._progress.active, self._progress.visible = False, False

    # ------------------------------------------------------------------ layout
    def __panel__(self):
        controls = pn.Param(self.param, show_name=False, widgets={
            "run": {"type": pn.widgets.Button, "color": "primary", "name": "Run (train)"}})
        return pn.Row(
            pn.Column(controls, width=320),
            pn.Column(self._alert, self._progress,
                      pn.Row(pn.pane.HoloViews(hv.DynamicMap(self.tpv_view),
                                               sizing_mode="stretch_width"),
                             pn.pane.HoloViews(hv.DynamicMap(self.bits_view),
                                               sizing_mode="stretch_width"),
                             sizing_mode="stretch_width"),
                      pn.panel(self.table_view, sizing_mode="stretch_width"),
                      sizing_mode="stretch_width"),
            sizing_mode="stretch_width")


# ---------------------------------------------------------------------- figures (shared
# with the notebook: each takes the lib's figure_*_data output)
def plot_scatter(df, perturbations=("quant", "sgd", "label")) -> hv.Layout:
    """F1: TPV on training vs test inputs, one panel per perturbation, coloured by the
    student's generalization gap, marker by n_train, with the y = x line (log-log)."""
    panels = []
    for p in perturbations:
        sub = df[df.perturbation == p]
        lo, hi = float(sub[["tpv_train", "tpv_test"]].min().min()) / 2, \
            float(sub[["tpv_train", "tpv_test"]].max().max()) * 2
        line = hv.Curve([(lo, lo), (hi, hi)], "TPV train", "TPV test").opts(
            color="grey", line_dash="dashed")
        layers = [line]
        for n, marker in zip(sorted(sub.n_train.unique()), ["triangle", "circle", "square"]):
            s = sub[sub.n_train == n]
            layers.append(hv.Scatter(s, "tpv_train", ["tpv_test", "gap", "width", "depth",
                                                      "teacher"], label=f"n_train={n}").opts(
                color="gap", cmap="viridis", colorbar=True, marker=marker, size=9,
                tools=["hover"], clabel="test - train MSE"))
        panels.append(hv.Overlay(layers).opts(
            logx=True, logy=True, title=LABELS[p], legend_position="top_left",
            xlabel="TPV (train inputs)", ylabel="TPV (test inputs)", responsive=True,
            min_height=340))
    return hv.Layout(panels).cols(len(panels))


def plot_quant_bits_curves(bits, trace, mc, current=None) -> hv.Overlay:
    """Trace form and Monte Carlo quantization TPV against bits (log y)."""
    layers = [hv.Curve((bits, trace), "bits", "quantization TPV", label="trace form")
              .opts(color="#1f77b4")]
    if mc is not None:
        layers.append(hv.Scatter((bits, mc), "bits", "quantization TPV", label="Monte Carlo")
                      .opts(color="black", size=7))
    if current is not None:
        layers.append(hv.VLine(current).opts(color="grey", line_dash="dotted"))
    return hv.Overlay(layers).opts(logy=True, title="Quantization TPV vs bits (slope 4^-b)",
                                   legend_position="top_right", responsive=True,
                                   min_height=320)


def plot_quant_bits(df) -> hv.Overlay:
    """F2: trace form (lines) vs Monte Carlo (points) per width, against bits (log y)."""
    layers = []
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for (w, sub), color in zip(df.groupby("width"), palette):
        layers += [hv.Curve((sub.bits, sub.trace), "bits", "quantization TPV",
                            label=f"width {w}: trace").opts(color=color),
                   hv.Scatter((sub.bits, sub.mc), "bits", "quantization TPV",
                              label=f"width {w}: MC").opts(color=color, size=8,
                                                           marker="circle")]
    return hv.Overlay(layers).opts(logy=True, title="Quantization TPV: trace vs Monte Carlo",
                                   legend_position="top_right", responsive=True,
                                   min_height=340)


def plot_pruning(df, y: str = "test_loss") -> hv.Overlay:
    """F3: test loss (or accuracy) against neuron sparsity for each criterion."""
    colors = {"jbr": "#d62728", "magnitude": "#1f77b4", "random": "#7f7f7f"}
    names = {"jbr": "JBR (TPV of removal)", "magnitude": "magnitude", "random": "random"}
    return hv.Overlay([
        hv.Curve((sub.sparsity, sub[y]), "neuron sparsity", y.replace("_", " "),
                 label=names.get(c, c)).opts(color=colors.get(c, "black"))
        for c, sub in df.groupby("criterion")]).opts(
        title="Structured pruning on digits (no fine-tuning)", legend_position="top_left",
        responsive=True, min_height=340)


Explorer = TPVExplorer


def create_app() -> pn.viewable.Viewable:
    """The served page: the paper's citation above the explorer."""
    return paper_page(
        "## Test prediction variance (tpv)\n\n"
        "Arpit, *Parameter Perturbations Through the Lens of Test Prediction Variance*, "
        "ICML 2026 ([arXiv 2512.11089](https://arxiv.org/abs/2512.11089)). **Run** trains "
        "an MLP student on a synthetic teacher; then TPV = Tr(H_eff C) on training and "
        "test inputs updates live for SGD noise, quantization, label noise and pruning.",
        Explorer())


if __name__.startswith("bokeh"):
    create_app().servable()
