"""Explorer for "Parameter Perturbations Through the Lens of Test Prediction Variance" (tpv).

**Run** trains one MLP student on a synthetic teacher (cached on disk), collects its
per-sample Jacobian statistics on the training and test inputs, then a Monte Carlo
quantization TPV for every bit width: three named stages. After that every view is analytic:
moving the bits, the label-noise sd and proximity penalty, or the SGD learning rate and batch
only rescales trace forms ``Tr(H_eff C)``, so the sliders answer at once.

Live views (Bokeh figures drawn once and updated in place, axes follow the data): TPV on
training inputs against TPV on test inputs (log-log, with y = x) for the chosen perturbation
(per-neuron JBR points for pruning); quantization TPV against bits, trace form against Monte
Carlo; a table of train/test values and ratios. Before Run both figures show the untrained
student's quantization trace form (one batched backward pass, no training). The notebook's
figures F1-F3 are in ``dashboards/tpv_figures.py``, re-exported here.

Serve alone with ``panel serve dashboards/tpv.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import panel as pn
import param
import torch

from icml26 import tpv
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory
from icml26.dashboards.tpv_figures import (  # noqa: F401 - the notebook's figures
    LABELS,
    PRUNING_Y,
    TPV_UNIT,
    plot_pruning,
    plot_quant_bits,
    plot_scatter,
)
from icml26.tpv.refits import compact_basis

N_TEST = 2000  # test inputs per student in the app (the paper's scripts use 5000)
MC_INPUTS = 256  # training inputs for the Monte Carlo quantization TPV
MC_DRAWS = 64  # noise draws per bit width
BITS = tuple(range(2, 13))  # Monte Carlo bit widths computed on Run
ALL_BITS = np.arange(1, 17)  # the bits slider's range: the trace form is drawn over it
UNTRAINED_INPUTS = 500  # inputs per split for the live view of the untrained student
COLORS = {"quant": "#1f77b4", "sgd": "#ff7f0e", "label": "#2ca02c", "prune": "#9467bd"}
CAPTION = (
    "**Left:** TPV on training inputs against TPV on test inputs for the chosen perturbation: "
    "the trace form Tr(H_eff C) with H_eff measured on each split (pruning: one point per "
    "hidden neuron, du = -w_g); dashed: y = x, where training inputs predict test inputs "
    "exactly. **Right:** quantization TPV on training inputs against bits b: trace form "
    "σ_q² Tr H_eff with σ_q² = δ²/12, δ = range(w)/(2^b - 1) (line) and, after Run, the Monte "
    f"Carlo estimate over {MC_DRAWS} uniform weight-noise draws on the first {MC_INPUTS} "
    "training inputs (points); dotted: the chosen bits. Before Run both show the untrained "
    f"student (quantization only, {UNTRAINED_INPUTS} inputs per split).")


#: (teacher, width, depth, n_train, seed) -> what a Run computed: ``info`` (the student's
#: losses), ``curv`` (:func:`icml26.tpv.curvature`), ``mc`` (Monte Carlo rows per bit width)
_ANALYSES: dict[tuple, dict] = {}
_MAX_ANALYSES = 8  # students kept in memory (the oldest goes first)


@functools.lru_cache(maxsize=16)
def _untrained_inputs(teacher: str, n_train: int, seed: int) -> tuple[torch.Tensor, ...]:
    data = tpv.teacher_data(teacher, 20, n_train, N_TEST, seed)
    return data["X_train"][:UNTRAINED_INPUTS], data["X_test"][:UNTRAINED_INPUTS]


def sq_jacobian_norms(model: tpv.MLP, x: torch.Tensor) -> torch.Tensor:
    """``||J(x)||_F^2`` per input of a scalar-output ReLU MLP by one batched backward pass:
    ``delta_l = df/da_l`` from the output down, ``sum_l |delta_l|^2 (|h_l|^2 + 1)`` (the same
    number as ``tpv.layer_factors(model, x).sq_norms()``, without ``vmap(jacrev)``)."""
    with torch.no_grad():
        inputs, preacts, h = [], [], x
        for i, lin in enumerate(model.layers):
            inputs.append(h)
            preacts.append(lin(h))
            h = torch.relu(preacts[-1]) if i + 1 < len(model.layers) else preacts[-1]
        delta = torch.ones_like(preacts[-1])
        total = delta.pow(2).sum(1) * (inputs[-1].pow(2).sum(1) + 1.0)
        for i in range(len(model.layers) - 2, -1, -1):
            delta = (delta @ model.layers[i + 1].weight) * (preacts[i] > 0)
            total = total + delta.pow(2).sum(1) * (inputs[i].pow(2).sum(1) + 1.0)
    return total


@functools.lru_cache(maxsize=64)
def untrained_traces(teacher: str, width: int, depth: int, n_train: int,
                     seed: int) -> tuple[float, float, float]:
    """``Tr H_eff`` on (at most ``UNTRAINED_INPUTS`` of) the train and test inputs and the
    weight range of the student at its initialisation (the exact starting point of
    :func:`icml26.tpv.train_student`): the live view before Run, a few milliseconds."""
    g = torch.Generator().manual_seed(7919 * seed + 31 * width + depth)
    model = tpv.MLP.build(20, width, depth, generator=g)
    tr = [float(sq_jacobian_norms(model, x).double().mean())
          for x in _untrained_inputs(teacher, n_train, seed)]
    w = tpv.flat_params(model)
    return tr[0], tr[1], float(w.max() - w.min())


def quant_variance(weight_range: float, bits) -> np.ndarray:
    """sigma_q^2 = delta^2 / 12 with delta = range / (2^b - 1)."""
    return (weight_range / (2.0 ** np.asarray(bits, dtype=float) - 1)) ** 2 / 12


# ---------------------------------------------------------------------- live charts (shared
# with the notebook through live.show)
def tpv_chart(points: np.ndarray, perturbation: str, trained: bool) -> Chart:
    """TPV on training inputs against TPV on test inputs (log-log) with the line y = x."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)
    pts = pts[(pts > 0).all(1)]  # a neuron dead on one split has TPV 0: off a log axis
    # y = x spans whole decades around the points: the log axes then tick at powers of ten
    # (a narrower span labels crowded minor ticks such as 7.000e-5 8.000e-5)
    lo = 10.0 ** np.floor(np.log10(pts.min()) - 0.5) if pts.size else 1e-12
    hi = 10.0 ** np.ceil(np.log10(pts.max()) + 0.5) if pts.size else 1.0
    title = (f"Train vs test TPV: {LABELS[perturbation]}" if trained
             else "Untrained student: quantization (Run trains)")
    return Chart(title, f"TPV on training inputs ({TPV_UNIT})",
                 f"TPV on test inputs ({TPV_UNIT})", [
                     Series("grey", [lo, hi], [lo, hi], "y = x", dash="dashed"),
                     Series(COLORS[perturbation], pts[:, 0], pts[:, 1], LABELS[perturbation],
                            kind="scatter")], x_log=True, y_log=True, height=320)


def quant_bits_chart(bits, trace, mc_bits, mc, current: int | None, trained: bool) -> Chart:
    """Quantization TPV against bits: trace form (line), Monte Carlo (points), the chosen
    bits (dotted)."""
    series = [Series(COLORS["quant"], bits, trace, "trace form"),
              Series("black", mc_bits, mc, "Monte Carlo" if trained else
                     "Monte Carlo (after Run)", kind="scatter")]
    if current is not None:
        series.append(Series("grey", kind="vline", at=current, dash="dotted"))
    title = "Quantization TPV vs bits" if trained else "Untrained: quantization TPV vs bits"
    return Chart(title, "bits b", f"quantization TPV, training inputs ({TPV_UNIT})", series,
                 y_log=True, height=320)


_PARAMS = ("teacher", "width", "depth", "n_train", "seed", "perturbation", "bits",
           "label_sigma", "label_lambda", "sgd_lr", "sgd_batch")


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
    label_lambda = param.Number(0.001, bounds=(0.001, 10.0), softbounds=(0.001, 1.0),
                                step=0.001,
                                doc="Proximity penalty lam ||w - w*||^2 of the label-noise "
                                    "refits (paper: 1e-3; 200 epochs of momentum SGD).")
    sgd_lr = param.Number(1e-3, bounds=(1e-4, 0.1), softbounds=(1e-4, 1e-2), step=1e-4,
                          doc="SGD learning rate (C = lr/2B Hess L; paper: 1e-3, 5e-4).")
    sgd_batch = param.Integer(32, bounds=(1, 1000), softbounds=(1, 256),
                              doc="SGD batch size B (paper: 32, 128).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the teacher, data and init.")
    run = param.Event(doc="Train the student and compute its Jacobian statistics.")

    INVALID_EXAMPLES = ()  # every in-bounds combination is valid
    RUN_LABEL, LIVE_CAPTION = "Run (train)", CAPTION
    WIDGETS = {"sgd_lr": {"type": pn.widgets.FloatSlider, "format": "0.0000"},
               "label_lambda": {"type": pn.widgets.FloatSlider, "format": "0.000"},
               "label_sigma": {"type": pn.widgets.FloatSlider, "format": "0.000"}}

    def __init__(self, **params):
        self._memo: tuple | None = None
        self._recorded_analysis: tuple | None = None  # (student key, analysis) as recorded
        super().__init__(**params)

    def run_state(self) -> dict:
        """The Run's analysis of this student (kept in the process-wide ``_ANALYSES``), its
        label-noise basis compacted (:func:`~icml26.tpv.refits.compact_basis`)."""
        an = self._analysis()
        if an is not None:
            an = {**an, "curv": replace(an["curv"], label=compact_basis(an["curv"].label))}
        return {"key": self._key(), "analysis": an}

    def restore_run_state(self, state: dict) -> None:
        """A recorded analysis, for its student only (a Run still computes it afresh)."""
        self._recorded_analysis = (state["key"], state["analysis"])

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
        """The analysis of the current student if Run has computed it in this process (or
        recorded, until a Run computes it)."""
        key = self._key()
        if key in _ANALYSES or self._recorded_analysis is None:
            return _ANALYSES.get(key)
        return self._recorded_analysis[1] if self._recorded_analysis[0] == key else None

    def plot_data(self) -> dict:
        """The numbers behind the views (memoised per settings: both figures and the table
        ask on every step). Before Run for these settings: the quantization trace form of
        the untrained student (``trained`` False, no table)."""
        an = self._analysis()
        key = (tuple(getattr(self, p) for p in _PARAMS), id(an))
        if self._memo is None or self._memo[0] != key:
            self._memo = (key, self._plot_data(an))
        return self._memo[1]

    def _plot_data(self, an: dict | None) -> dict:
        bits = ALL_BITS
        if an is None:
            tr, te, rng = untrained_traces(*self._key())
            now = float(quant_variance(rng, self.bits))
            empty = np.zeros(0)
            points = {p: np.zeros((0, 2)) for p in tpv.PERTURBATIONS}
            points["quant"] = np.array([[now * tr, now * te]])
            sig2 = quant_variance(rng, bits)
            return {"trained": False, "points": points, "bits": bits,
                    "trace_train": sig2 * tr, "trace_test": sig2 * te,
                    "bits_trace": sig2 * tr, "mc_bits": empty, "mc": empty,
                    "mc_trace": empty, "table": []}
        curv = an["curv"]
        forms = tpv.trace_forms(curv, self.bits, self.sgd_lr, self.sgd_batch,
                                self.label_sigma, self.label_lambda)
        points = {p: np.array([[forms[f"{p}_train"], forms[f"{p}_test"]]])
                  for p in ("quant", "sgd", "label")}
        points["prune"] = np.concatenate(
            [np.stack([tr.numpy(), te.numpy()], 1)
             for tr, te in zip(curv.neuron["train"], curv.neuron["test"])]).astype(float)
        sig2 = quant_variance(curv.w_max - curv.w_min, bits)
        mc = an["mc"]
        mc_bits = np.array([r["bits"] for r in mc], dtype=float)
        mc_trace = np.array([r["trace"] for r in mc])
        # the Monte Carlo inputs' trace form over every bit: sigma_q^2 scales as (2^b - 1)^-2
        bits_trace = mc_trace[0] * ((2.0 ** mc_bits[0] - 1) / (2.0 ** bits - 1)) ** 2
        table = [{"perturbation": LABELS[p], "train": float(points[p][:, 0].sum()),
                  "test": float(points[p][:, 1].sum()),
                  "ratio": float(points[p][:, 0].sum() / max(points[p][:, 1].sum(), 1e-300))}
                 for p in tpv.PERTURBATIONS]
        return {"trained": True, "points": points, "bits": bits,
                "trace_train": sig2 * curv.trace_heff["train"],
                "trace_test": sig2 * curv.trace_heff["test"], "bits_trace": bits_trace,
                "mc_bits": mc_bits, "mc": np.array([r["mc"] for r in mc]),
                "mc_trace": mc_trace, "table": table}

    # ------------------------------------------------------------------ views
    @param.depends(*_PARAMS, "run_done")
    def tpv_view(self) -> Chart:
        """TPV on training inputs vs on test inputs for the chosen perturbation (log-log)."""
        d = self.plot_data()
        shown = self.perturbation if d["trained"] else "quant"
        return tpv_chart(d["points"][shown], shown, d["trained"])

    @param.depends("teacher", "width", "depth", "n_train", "seed", "bits", "run_done")
    def bits_view(self) -> Chart:
        """Quantization TPV vs bits: trace form and (after Run) Monte Carlo (F2)."""
        d = self.plot_data()
        return quant_bits_chart(d["bits"], d["bits_trace"], d["mc_bits"], d["mc"], self.bits,
                                d["trained"])

    def live_charts(self) -> list:
        return [self.tpv_view, self.bits_view]

    @param.depends(*_PARAMS, "run_done")
    def result_note(self) -> str:
        """The TPV table: train and test TPV of every perturbation and their ratio
        (markdown), or what to press before Run."""
        d = self.plot_data()
        if not d["table"]:
            return ("**TPV table:** press **Run (train)** to train this student and compute "
                    "every perturbation's TPV on training and test inputs.")
        info = self._analysis()["info"]
        rows = [f"| {r['perturbation']} | {r['train']:.3e} | {r['test']:.3e} | "
                f"{r['ratio']:.3f} |" for r in d["table"]]
        rows.append(f"| student MSE | {info['loss_train']:.4f} | {info['loss_test']:.4f} | "
                    f"gap {info['gap']:.4f} |")
        return "\n".join([f"| TPV ({TPV_UNIT}) of | training inputs | test inputs | "
                          "train / test |", "|---|---:|---:|---:|", *rows])

    @param.depends(*_PARAMS, watch=True)
    def _update_alert(self) -> None:
        self._show_error()

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config, which it does not need)."""
        key, seed = self._key(), self.seed
        teacher, width, depth, n_train, _ = key
        if key in _ANALYSES:
            self.run_stages([("this student was analysed earlier: redrawing",
                              lambda: None)], lambda _results: None)
            return
        trained: dict = {}

        def fit():
            trained["model"], trained["data"], trained["info"] = tpv.train_student(
                *key, n_test=N_TEST)

        stages = [
            (f"training the student: {teacher} teacher, width {width}, depth {depth}, "
             f"{n_train} inputs ({tpv.SCALES['quick'].steps} full-batch Adam steps; "
             "cached on disk)", fit),
            (f"estimating per-sample Jacobians on {n_train} training and {N_TEST} test "
             "inputs (H_eff traces, NTK Grams, neuron TPVs)",
             lambda: tpv.curvature(trained["model"], trained["data"])),
            (f"estimating Monte Carlo quantization TPV: {MC_DRAWS} draws x {len(BITS)} bit "
             f"widths on {MC_INPUTS} training inputs",
             lambda: tpv.quant_bits_rows(trained["model"], trained["data"]["X_train"][:MC_INPUTS],
                                         BITS, MC_DRAWS, seed))]

        def keep(results):
            _ANALYSES[key] = {"info": trained["info"], "curv": results[1], "mc": results[2]}
            while len(_ANALYSES) > _MAX_ANALYSES:
                _ANALYSES.pop(next(iter(_ANALYSES)))

        self.run_stages(stages, keep)


Explorer = TPVExplorer
create_app = app_factory(Explorer, (
    "## Test prediction variance (tpv)\n\n"
    "Arpit, *Parameter Perturbations Through the Lens of Test Prediction Variance*, "
    "ICML 2026 ([arXiv 2512.11089](https://arxiv.org/abs/2512.11089)). **Run** trains "
    "an MLP student on a synthetic teacher; then TPV = Tr(H_eff C) on training and "
    "test inputs updates live for SGD noise, quantization, label noise and pruning."))

if __name__.startswith("bokeh"):
    create_app().servable()
