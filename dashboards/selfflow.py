"""Explorer for "Self-Supervised Flow Matching for Scalable Multi-Modal Synthesis" (selfflow).

Live views: the Dual-Timestep Schedule of the chosen settings -- the distribution of the
student's and the teacher's per-token noise levels (and vanilla's one level per image), and
the levels of every token of a few example images -- recomputed on every slider move (~10 ms).
Behind the Run button (with progress): train the four tiny DiTs on sklearn digits at equal
compute (vanilla flow matching, same-timestep self-distillation, Self-Flow, Self-Flow with
attention separation; cached per settings, so the defaults reuse the claims' models), then
linear probes per block, held-out flow-matching loss and samples.
The module also holds the plot functions the notebook uses.

Serve alone with ``panel serve dashboards/selfflow.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import dataclasses

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import selfflow
from icml26.dashboards.app import (
    Chart,
    ExplorerBase,
    Series,
    app_factory,
    message_plot,
    rows,
    run_chart,
)
from icml26.dashboards.app.run_costs import duration, recorded_run, recorded_run_words

COLORS = {"vanilla": "#7f7f7f", "same_t": "#ff7f0e", "selfflow": "#1f77b4",
          "selfflow_sep": "#2ca02c", "raw pixels": "#d62728"}
QUICK = selfflow.config_for("quick")
#: a cheaper Run offered before a Run that trains (not the claims' models)
SHORT_STEPS = 200


# --------------------------------------------------------------------------- plot functions
def probe_chart(summary: list[dict], probe: str, title: str | None = None) -> Chart:
    """Probe accuracy vs block for every model at one probe setting (mean; +- SE as dotted
    lines when several seeds); the raw-pixel probe as a dashed line."""
    series = []
    for v in selfflow.VARIANTS:
        rows = sorted((r for r in summary if r["variant"] == v and r["probe"] == probe),
                      key=lambda r: r["layer"])
        if not rows:
            continue
        x = np.array([r["layer"] for r in rows], float)
        m = np.array([r["mean"] for r in rows])
        se = np.array([r["se"] for r in rows])
        series += [Series(COLORS[v], x, m, selfflow.LABELS[v]),
                   Series(COLORS[v], x, m, kind="scatter")]
        if se.any():
            series += [Series(COLORS[v], x, m + se, dash="dotted", width=1),
                       Series(COLORS[v], x, m - se, dash="dotted", width=1)]
    pix = [r["mean"] for r in summary if r["variant"] == "raw pixels" and r["probe"] == probe]
    if pix:
        series.append(Series(COLORS["raw pixels"], kind="hline", at=pix[0], dash="dashed",
                             label="raw noisy pixels"))
    n = max((r["n"] for r in summary), default=1)
    return Chart(title or f"Linear probe, {probe} ({n} seed{'s' if n > 1 else ''})",
                 "DiT block", "probe accuracy", series, height=330)


def loss_chart(curves: dict[str, list]) -> Chart:
    """Training flow-matching loss vs step per model (means over the logging window)."""
    series = []
    for v, curve in curves.items():
        c = np.array(curve)
        series.append(Series(COLORS[v], c[:, 0], c[:, 1], selfflow.LABELS[v]))
    return Chart("Training flow-matching loss", "optimizer step", "flow-matching loss (MSE)",
                 series, y_log=True, height=330)


def sample_mosaic(samples: dict[str, np.ndarray], per_row: int = 8) -> hv.Image:
    """Generated digits: one row of ``per_row`` samples per model (Euler, 20 steps)."""
    rows = []
    for v in samples:
        imgs = samples[v][:per_row]
        row = np.concatenate([np.pad(im, 1, constant_values=-1) for im in imgs], axis=1)
        rows.append(row)
    mosaic = np.concatenate(rows, axis=0)
    h, w = mosaic.shape
    names = list(samples)
    ticks = [(h - 5 - 10 * i, selfflow.LABELS[v]) for i, v in enumerate(names)]
    return hv.Image(mosaic[::-1], bounds=(0, 0, w, h), kdims=["generated sample", "model"],
                    vdims=["pixel value"]).opts(
        cmap="gray_r", yticks=ticks, xticks=[(10 * i + 5, str(i + 1)) for i in range(per_row)],
        title="Samples (rows: models)", responsive=True, min_height=260, toolbar=None,
        colorbar=False, clim=(-1, 1))


def schedule_chart(cfg: selfflow.TrainConfig, bins: int = 25) -> Chart:
    """Distribution of per-token noise levels: student (Self-Flow), teacher, vanilla."""
    d = selfflow.figure_schedule_data(cfg, n=2000)
    edges = np.linspace(0, 1, bins + 1)
    mids = (edges[:-1] + edges[1:]) / 2

    def hist(a):
        h, _ = np.histogram(np.clip(a, 0, 1 - 1e-9), edges, density=True)
        return h

    series = [Series(COLORS["selfflow"], mids, hist(d["tau_student"][~d["mask"]]),
                     "student, unmasked tokens"),
              Series(COLORS["selfflow_sep"], mids, hist(d["tau_student"][d["mask"]]),
                     "student, masked tokens", dash="dashed"),
              Series(COLORS["same_t"], mids, hist(d["tau_teacher"]), "teacher"),
              Series(COLORS["vanilla"], mids, hist(d["tau_vanilla"]), "vanilla (one t)",
                     dash="dotted")]
    return Chart(f"Noise levels: mask ratio {cfg.mask_ratio:.2f}, masked tokens "
                 f"{cfg.mask_noise}", "noise level tau (0 data, 1 noise)", "density", series,
                 height=300)


def example_chart(cfg: selfflow.TrainConfig, n_images: int = 3) -> Chart:
    """Per-token noise levels of a few images: student (dots) and teacher (lines)."""
    d = selfflow.figure_schedule_data(cfg, n=n_images, seed=1)
    tok = np.arange(d["tau_student"].shape[1], dtype=float)
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]
    series = []
    for i in range(n_images):
        c = palette[i % len(palette)]
        series += [Series(c, tok, d["tau_student"][i], f"image {i + 1}", kind="scatter"),
                   Series(c, tok, d["tau_teacher"][i], dash="dashed", width=1)]
    return Chart("Per-token levels (dots: student, dashed: teacher)", "token (2x2 patch)",
                 "noise level tau", series, height=300)


LIVE_CAPTION = (
    "*Left:* Dual-Timestep Scheduling draws t and s per image (logit-normal); the student "
    "sees the tokens in the mask M at s and the others at t ('dual', the paper), or its "
    "tokens at the noisier max(t, s) and the masked ones at full noise ('full'); the EMA "
    "teacher sees every token at min(t, s). Vanilla flow matching has one t per image. "
    "*Right:* the levels of every token of a few images.")


# --------------------------------------------------------------------------- explorer
class SelfFlowExplorer(ExplorerBase):
    """Choose the Dual-Timestep Schedule and the distillation; train and probe four DiTs."""

    example_images = param.Integer(3, bounds=(1, 6),
                                   doc="Images in the per-token view (a view setting: Run "
                                       "does not depend on it).")
    mask_ratio = param.Number(0.25, bounds=(0.05, 0.75), step=0.05,
                              doc="Fraction of tokens in the mask M (the paper: 0.25).")
    mask_noise = param.Selector(default="dual", objects=list(selfflow.MASK_NOISE),
                                doc="'dual' (the paper): the student's tokens in M at s, the "
                                    "others at t; 'full': the student's tokens at max(t, s), "
                                    "the masked ones at tau = 1 (cost generation on seed 0).")
    t_mean = param.Number(0.0, bounds=(-1.5, 1.5), step=0.1,
                          doc="Mean of the logit-normal time distribution (0: centred).")
    t_std = param.Number(1.0, bounds=(0.3, 2.0), step=0.1,
                         doc="Std of the logit-normal time distribution.")
    teacher_view = param.Selector(default="clean", objects=list(selfflow.TEACHER_VIEWS),
                                  doc="'clean': the teacher sees every token at min(t, s); "
                                      "'student': the mutation, the student's noisier view.")
    gamma = param.Number(1.0, bounds=(0.0, 5.0), step=0.1,
                         doc="Weight of the alignment loss (1 - cosine).")
    student_layer = param.Integer(1, bounds=(0, 3), doc="Student block aligned (0-based).")
    teacher_layer = param.Integer(3, bounds=(0, 3), doc="EMA teacher block (target).")
    ema = param.Number(0.99, bounds=(0.9, 0.999), step=0.001, doc="Teacher EMA decay.")
    steps = param.Integer(QUICK.train.steps, bounds=(100, 3000), step=100,
                          doc=f"Optimizer steps per model (batch 64; default: the claims' "
                              f"{QUICK.train.steps}, so a Run reads the claims' cached "
                              f"models once they ran). The line under the Run button says "
                              f"before a Run whether it trains and for how long.")
    probe = param.Selector(default=selfflow.PROBES[2][0], objects=[p[0] for p in
                                                                    selfflow.PROBES],
                           doc="Probe setting shown after Run (tau of every token; 'half "
                               "masked': half the tokens at full noise).")
    seed = param.Integer(0, bounds=(0, 6), doc="Seed of the data split, init and noise.")
    run = param.Event(doc="Train the four models (cached per settings) and probe them.")
    RUN_LABEL, LIVE_CAPTION = "Run training", LIVE_CAPTION

    # ------------------------------------------------------------------ model
    def train_config(self) -> selfflow.TrainConfig:
        """The lib training config of these settings (raises ValueError when invalid)."""
        if self.teacher_layer <= self.student_layer:
            raise ValueError(f"the teacher block ({self.teacher_layer}) must be deeper than the"
                             f" student block ({self.student_layer})")
        cfg = dataclasses.replace(
            QUICK.train, mask_ratio=round(self.mask_ratio, 4), mask_noise=self.mask_noise,
            t_mean=round(self.t_mean, 4), t_std=round(self.t_std, 4),
            teacher_view=self.teacher_view, gamma=round(self.gamma, 4),
            student_layer=self.student_layer, teacher_layer=self.teacher_layer,
            ema=round(self.ema, 4), steps=self.steps)
        cfg.validate()
        return cfg

    def config(self) -> selfflow.SelfFlowConfig:
        return dataclasses.replace(QUICK, train=self.train_config())

    @param.depends("student_layer", "teacher_layer", "mask_ratio", "t_std", watch=True,
                   on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    @param.depends("mask_ratio", "mask_noise", "t_mean", "t_std", "teacher_view")
    def schedule_chart(self) -> Chart:
        """Distribution of the per-token noise levels the student and teacher see."""
        return schedule_chart(self._schedule_config())

    @param.depends("example_images", "mask_ratio", "mask_noise", "t_mean", "t_std",
                   "teacher_view")
    def example_chart(self) -> Chart:
        """The per-token noise levels of a few example images."""
        return example_chart(self._schedule_config(), self.example_images)

    def _schedule_config(self) -> selfflow.TrainConfig:
        # the schedule does not depend on the layers: draw it even when they are invalid
        return dataclasses.replace(QUICK.train, mask_ratio=round(self.mask_ratio, 4),
                                   mask_noise=self.mask_noise, t_mean=round(self.t_mean, 4),
                                   t_std=round(self.t_std, 4), teacher_view=self.teacher_view)

    def live_charts(self) -> list:
        return [self.schedule_chart, self.example_chart]

    # ------------------------------------------------------------------ Run results
    @run_chart("probe")
    def probe_view(self) -> Chart | None:
        """Probe accuracy per block for the four models at the chosen probe setting."""
        return probe_chart(self._result["summary"], self.probe)

    @run_chart
    def loss_view(self) -> Chart | None:
        """Training FM loss curves of the Run's models."""
        return loss_chart(self._result["curves"])

    def run_charts(self) -> list:
        return [self.probe_view, self.loss_view]

    def result_panes(self) -> list:
        return [*rows(self.run_panes()), pn.panel(self.sample_view, sizing_mode="stretch_width")]

    @param.depends("run_done")
    def sample_view(self) -> hv.Element:
        if self._result is None:
            return message_plot("Press Run: samples of the four models appear here")
        return sample_mosaic(self._result["samples"])

    def result_note(self) -> str:
        if self._result is None:
            return ("**Four models, equal compute:** press **Run** to train and probe them "
                    "(the line under the button says whether it trains or reads the cache).")
        r = self._result
        fm = ", ".join(f"{selfflow.LABELS[v]} {r['fm'][v]:.4f}" for v in selfflow.VARIANTS)
        gains = ", ".join(f"{p}: {g:+.3f}" for p, g in r["gain"].items())
        return (f"**{r['title']}.** Held-out FM loss: {fm} (Self-Flow / vanilla "
                f"{r['fm']['selfflow'] / r['fm']['vanilla']:.3f}). Best-block probe gain "
                f"Self-Flow - vanilla: {gains}.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed

        def stage(v):
            return lambda: (selfflow.trained(cfg, v, seed), selfflow.evaluate(cfg, v, seed))[1]

        def keep(results):
            res = dict(zip(selfflow.VARIANTS, results))
            rows = [r for v in selfflow.VARIANTS for r in res[v]["probes"]]
            rows += [{**r, "variant": "raw pixels", "layer": -1}
                     for r in selfflow.pixel_probes(cfg, seed)]
            self._result = {
                "summary": selfflow.probe_summary(rows),
                "curves": {v: res[v]["curve"] for v in selfflow.VARIANTS},
                "samples": {v: res[v]["samples"] for v in selfflow.VARIANTS},
                "fm": {v: res[v]["fm_loss"] for v in selfflow.VARIANTS},
                "gain": selfflow.probe_gaps(res, "selfflow", "vanilla"),
                "title": f"{cfg.train.steps} steps, mask ratio {cfg.train.mask_ratio:g} "
                         f"({cfg.train.mask_noise}), gamma {cfg.train.gamma:g}, blocks "
                         f"{cfg.train.student_layer}->{cfg.train.teacher_layer}, teacher view "
                         f"{cfg.train.teacher_view}, seed {seed}"}

        todo = selfflow.to_compute(cfg, seed)  # the verb of a stage that misses the cache
        self.run_stages([(f"{selfflow.LABELS[v]}: {cfg.train.steps}-step model and its "
                          "probes", stage(v),
                          "training" if todo.get(v) == "train" else "probing")
                         for v in selfflow.VARIANTS], keep)

    def plan_note(self) -> str:
        """What a Run at the current settings costs, said before it: read from the cache,
        or trained (and how long, from the recorded default Run)."""
        try:
            cfg = self.config()
        except ValueError:
            return ""
        whose = "the claims' models" if cfg == QUICK else "not the claims' models"
        todo = selfflow.to_compute(cfg, self.seed)
        if not todo:
            return f"**This Run** ({whose}) reads the four models from the cache: seconds."
        train = [v for v, what in todo.items() if what == "train"]
        text = (f"**This Run** ({whose}) trains {len(train)} of 4 models ({cfg.train.steps} "
                f"steps each; not in the cache)" if train else
                f"**This Run** ({whose}) probes {len(todo)} cached models")
        cost = recorded_run("selfflow")
        if cost is not None and train:
            per_step = cost["cpu_s"] / (4 * QUICK.train.steps)
            text += (f": about {duration(per_step * cfg.train.steps * len(train))} on an "
                     f"idle core ({recorded_run_words(cost)})")
        text += ", then caches them."
        if train and cfg.train.steps > SHORT_STEPS and cost is not None:
            text += (f" Cheaper: *Steps* {SHORT_STEPS}, about "
                     f"{duration(per_step * SHORT_STEPS * len(train))} (not the claims' "
                     f"models: their result may differ).")
        return text


def _run_time() -> str:
    cost = recorded_run("selfflow")
    return ("seconds once the claims cached their models, else minutes" if cost is None else
            f"seconds once the claims cached their models; {recorded_run_words(cost)}")


Explorer = SelfFlowExplorer
create_app = app_factory(Explorer, lambda: (  # the recorded Run time, read at page build
    "## Self-Flow: self-supervised flow matching (selfflow)\n\n"
    "Chefer, Esser, Lorenz, Podell, Raja, Tong, Torralba & Rombach, *Self-Supervised Flow "
    "Matching for Scalable Multi-Modal Synthesis* ([arXiv 2603.06507]"
    "(https://arxiv.org/abs/2603.06507)). Live: the teacher/student noise schedule; "
    "**Run** trains four tiny DiTs on sklearn digits at equal compute and probes them "
    f"({_run_time()}; the line under the Run button says which). "
    "Reproduced: generation is kept; the representation gain is **not** reproduced at "
    "this scale."))

if __name__.startswith("bokeh"):
    create_app().servable()
