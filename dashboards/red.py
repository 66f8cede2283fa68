"""Explorer for "Reasoning-preserved Efficient Distillation via Activation-aware Initialization".

Live views: the teacher's outlier check (sorted channel RMS per layer), the singular values of
the projection ``P`` per initialisation, and a synthetic toy -- hidden states with lognormal
channel scales of the chosen outlier strength, projected to every width by each
initialisation (eRank after projection). Behind the Run button (with progress): each chosen
initialisation's student is distilled from the teacher on generic text for the chosen steps;
then per-layer eRank before/after, 1-3 hop accuracy and eRank against accuracy over
checkpoints. The module also holds the chart functions the notebook uses.

Serve alone with ``panel serve dashboards/red.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np
import panel as pn
import param
import torch

from icml26 import red
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

COLORS = {"gaussian": "#d62728", "red": "#1f77b4", "random_select": "#ff7f0e",
          "orthogonal": "#2ca02c"}
LABELS = {"gaussian": "Gaussian", "red": "RED", "random_select": "random sel.",
          "orthogonal": "orthogonal"}
LAYER_COLORS = ("#9ecae1", "#4292c6", "#2171b5", "#08306b")
OUTLIER_BAR = 4.0  # the teacher_outliers threshold


# --------------------------------------------------------------------------- chart functions
def outlier_chart(teacher: dict, top: int = 32) -> Chart:
    """The outlier check: the ``top`` largest channel RMS of each teacher layer, over the
    median channel RMS (an outlier channel would stand far above the rest)."""
    # the bar as a line (not an hline) so that the axis range includes it
    series = [Series("grey", [1, top], [OUTLIER_BAR, OUTLIER_BAR], dash="dashed", width=1)]
    for i, layer in enumerate(teacher["layers"]):
        r = layer["rms_sorted"]
        y = (r / r.median()).numpy()[:top]
        series.append(Series(LAYER_COLORS[i % len(LAYER_COLORS)], np.arange(1, len(y) + 1), y,
                             f"layer {i + 1}"))
    worst = max(x["outlier_ratio"] for x in teacher["layers"])
    return Chart(f"Teacher channels: largest RMS = {worst:.2f} x median (dashed: 4)",
                 "channel rank (by RMS)", "channel RMS / median channel RMS", series)


#: draw order and dash of the spectrum: a channel selection (RED's or a random one) and an
#: orthogonal P have every singular value exactly 1, so their three lines coincide; solid
#: first, then dashed and dotted on top, and each shows
SPECTRUM_STYLE = {"gaussian": "solid", "orthogonal": "solid", "red": "dashed",
                  "random_select": "dotted"}


def spectrum_chart(students: dict) -> Chart:
    """Sorted singular values of each initial projection ``P``."""
    series = []
    for init in sorted(students, key=lambda k: list(SPECTRUM_STYLE).index(k)
                       if k in SPECTRUM_STYLE else len(SPECTRUM_STYLE)):
        sv = np.asarray(students[init]["p0_singular"], dtype=float)
        series.append(Series(COLORS[init], np.arange(1, len(sv) + 1), sv, LABELS[init],
                             dash=SPECTRUM_STYLE.get(init, "solid")))
    cond = students["gaussian"]["cond"] if "gaussian" in students else float("nan")
    return Chart(f"Singular values of P (Gaussian cond. {cond:.1f}; the others: all 1)",
                 "index (sorted)", "singular value", series)


def erank_chart(students: dict) -> Chart:
    """Per-layer eRank of each student's hidden states: at init (dotted) and after
    distillation (solid)."""
    series = []
    for init, s in students.items():
        first, last = s["curve"][0]["erank"], s["curve"][-1]["erank"]
        layers = np.arange(1, len(last) + 1)
        series += [Series(COLORS[init], layers, first, dash="dotted"),
                   Series(COLORS[init], layers, last, LABELS[init]),
                   Series(COLORS[init], layers, last, kind="scatter")]
    steps = next(iter(students.values()))["curve"][-1]["step"]
    return Chart(f"eRank per layer: at init (dotted), after {steps} steps (solid)",
                 "layer", "eRank of the hidden states", series)


def accuracy_chart(students: dict, teacher: dict | None = None) -> Chart:
    """1-3 hop accuracy of each student after distillation (dotted: chance)."""
    hops = np.arange(1, red.MAX_HOPS + 1)
    series = [Series("grey", kind="hline", at=1 / 8, dash="dotted", width=1)]
    if teacher is not None:
        series.append(Series("black", hops, [teacher[f"acc{h}"] for h in hops], "teacher",
                             dash="dashed"))
    for init, s in students.items():
        last = s["curve"][-1]
        acc = [last[f"acc{h}"] for h in hops]
        series += [Series(COLORS[init], hops, acc, LABELS[init]),
                   Series(COLORS[init], hops, acc, kind="scatter")]
    return Chart("Hop accuracy after distillation (dotted: chance)", "hops", "accuracy",
                 series)


def checkpoint_chart(students: dict, hops: int = 3) -> Chart:
    """eRank (mean over layers) against ``hops``-hop accuracy at every checkpoint."""
    series = []
    for init, s in students.items():
        x = [float(np.mean(c["erank"])) for c in s["curve"]]
        y = [c[f"acc{hops}"] for c in s["curve"]]
        series += [Series(COLORS[init], x, y, LABELS[init], kind="scatter"),
                   Series(COLORS[init], x, y, width=1)]
    return Chart(f"eRank vs {hops}-hop accuracy over checkpoints", "mean eRank over layers",
                 f"{hops}-hop accuracy", series)


def activation_random_chart(record) -> Chart:
    """Activation-aware (RED) against random channel selection per seed
    (``benchmarks/red/red_random_selection.csv``, a DataFrame): eRank RED / random in the worst
    layer (left of each seed), perplexity random / RED (right) and their minimum, the claim
    ``activation_beats_random`` (on the seed; above 1 when RED is better; the bar 1 as a line
    so that the axis range includes it). Seeds at evenly spaced positions, labelled by seed;
    the fresh seeds (>= 100) right of the dotted line."""
    x = np.arange(len(record), dtype=float)
    bar = [float(x.min()) - 0.5, float(x.max()) + 0.5] if len(x) else [0.0, 1.0]
    series = [Series("grey", bar, [1.0, 1.0], dash="dashed", width=1)]
    fresh = np.flatnonzero(record["seed"].to_numpy() >= 100)
    if 0 < len(fresh) < len(x):
        series.append(Series("grey", kind="vline", at=fresh[0] - 0.5, dash="dotted", width=1))
    for column, color, shift, label in (
            ("erank_red_random", COLORS["red"], -0.2, "eRank RED / random (worst layer)"),
            ("ppl_random_red", COLORS["random_select"], 0.2, "perplexity random / RED"),
            ("activation_beats_random", "black", 0.0, "claim: the lower of the two")):
        series.append(Series(color, x + shift, record[column].to_numpy(float), label,
                             kind="scatter"))
    return Chart("Activation-aware vs random channel selection per seed (dashed: 1; right of "
                 "dotted: fresh seeds)", "seed", "ratio (> 1: RED better)", series,
                 x_names=dict(zip(x.tolist(), [str(s) for s in record["seed"]])))


RECIPE_COLORS = {"current": "#7f7f7f", "bos": "#1f77b4", "bos_lr": "#d62728",
                 "bos_long": "#2ca02c"}


def outlier_training_chart(record, recipe: str | None = None,
                           column: str = "outlier_ratio") -> Chart:
    """The outlier check over the teacher's training (``benchmarks/red/red_outliers.csv``, a
    DataFrame): ``column`` against the training step, the max over layers for every recipe,
    or one line per layer for ``recipe`` (dashed: the bar 4 of ``teacher_outliers``)."""
    series = []
    shown = record if recipe is None else record[record["recipe"] == recipe]
    if column == "outlier_ratio":  # the bar spans the steps shown, not the longest recipe's
        steps = [float(shown["step"].min()), float(shown["step"].max())]
        series.append(Series("grey", steps, [OUTLIER_BAR] * 2, dash="dashed", width=1))
    if recipe is None:
        for name, rows in record.groupby("recipe", sort=False):
            worst = rows.groupby("step")[column].max()
            series.append(Series(RECIPE_COLORS.get(name, "black"), worst.index, worst.values,
                                 name))
        title = "max over layers, per teacher recipe"
    else:
        for layer, r in shown.groupby("layer"):
            series.append(Series(LAYER_COLORS[(layer - 1) % len(LAYER_COLORS)], r["step"],
                                 r[column], f"layer {layer}"))
        title = f"per layer, recipe {recipe}"
    label = {"outlier_ratio": "largest channel RMS / median",
             "massive": "largest |h| / median |h|"}.get(column, column)
    return Chart(f"Teacher outliers over training: {title}", "training step", label, series)


# --------------------------------------------------------------------------- toy and teacher
@functools.lru_cache(maxsize=64)
def _toy(strength: float, seed: int) -> dict:
    """eRank after projecting synthetic hidden states (``[1024, 128]``, lognormal channel
    scales ``exp(strength * z)``) to each width by each init."""
    g = torch.Generator().manual_seed(seed)
    d = 128
    scale = torch.exp(strength * torch.randn(d, generator=g))
    h = torch.randn(1024, d, generator=g) * scale
    energy = (h ** 2).mean(0)
    widths = list(range(16, d, 16))
    out = {"widths": widths, "full": red.erank(h)}
    for init in red.INITS:
        out[init] = [red.erank(h @ red.init_projection(init, d, w, energy,
                                                       torch.Generator().manual_seed(seed + w)))
                     for w in widths]
    return out


@functools.lru_cache(maxsize=1)
def _teacher_stats() -> dict:
    return red.teacher_stats(red.config_for("quick"))


@functools.lru_cache(maxsize=32)
def _projections(d_small: int, seed: int) -> dict:
    cfg = replace(red.config_for("quick"), d_small=d_small)
    out, energy = {}, _teacher_stats()["energy"]
    for init in red.INITS:
        p = red.projection(cfg, init, seed, energy)
        out[init] = {"p0_singular": torch.linalg.svdvals(p), "cond": red.condition_number(p)}
    return out


LIVE_CAPTION = (
    "*Top left:* the teacher's largest channel RMS over the median, per layer (dashed: the "
    "outlier bar 4 of the claim `teacher_outliers`); the second design's teacher (issue 34: a "
    "BOS token first, peak lr 1e-2) has an outlier channel, 6.1-6.6x the median in every "
    "layer (the next one 4.0-4.5x). "
    "*Top right:* singular values of the initial projection P (128 x d'): Gaussian spreads "
    "them (Marchenko-Pastur); selections (RED, random) and orthogonal have all equal to 1 "
    "(one line). *Bottom:* a toy with lognormal channel scales (dashed: eRank before "
    "projection): without outliers every flat-spectrum P keeps the same eRank and the Gaussian "
    "less; with strong ones the eRank collapses, RED stays above Gaussian and a random "
    "selection swings with the outlier channels it happens to drop.")


# --------------------------------------------------------------------------- explorer
class REDExplorer(ExplorerBase):
    """Choose a width and initialisations; distil the students and compare."""

    ratio = param.Selector(default=0.5, objects=[0.25, 0.5, 0.75],
                           doc="Student width d'/d (d = 128; the claims use 0.5).")
    outlier_strength = param.Number(1.0, bounds=(0.0, 3.0), step=0.1,
                                    doc="Sigma of the lognormal channel scales of the toy's "
                                        "synthetic hidden states (0 = no outlier channels).")
    inits = param.ListSelector(default=list(red.INITS), objects=list(red.INITS),
                               doc="Initialisations of the projections distilled by Run.")
    distill_steps = param.Integer(30, bounds=(10, 400), step=10,
                                  doc="KL distillation steps on generic text (claims: 100).")
    hops = param.Integer(3, bounds=(1, red.MAX_HOPS),
                         doc="Hop count of the eRank-vs-accuracy view (1-3).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the projections and the "
                                                     "distillation batches.")
    run = param.Event(doc="Distil one student per chosen initialisation.")
    RUN_LABEL, LIVE_CAPTION = "Run distillation", LIVE_CAPTION
    WIDGETS = {"inits": pn.widgets.CheckBoxGroup}

    def config(self) -> red.RedConfig:
        """The lib config of the Run (raises ValueError when invalid)."""
        if not self.inits:
            raise ValueError("choose at least one initialisation")
        cfg = replace(red.config_for("quick"), d_small=int(round(128 * self.ratio)),
                      distill_steps=self.distill_steps, inits=tuple(self.inits),
                      checkpoints=2, eval_hops=200)  # the shipped teacher's config
        cfg.validate()
        return cfg

    @param.depends("inits", watch=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    def outlier_view(self) -> Chart:
        """The teacher's sorted channel RMS per layer (fixed: the teacher is shared)."""
        return outlier_chart(_teacher_stats())

    @param.depends("ratio", "seed")
    def spectrum_view(self) -> Chart:
        return spectrum_chart(_projections(int(round(128 * self.ratio)), self.seed))

    @param.depends("outlier_strength", "ratio", "seed")
    def toy_view(self) -> Chart:
        """Toy: eRank after projection vs width; the vertical mark is the chosen width."""
        toy = _toy(round(self.outlier_strength, 3), self.seed)
        ends = [toy["widths"][0], toy["widths"][-1]]
        series = [Series("grey", ends, [toy["full"]] * 2, dash="dashed", width=1),
                  Series("black", kind="vline", at=128 * self.ratio, dash="dotted", width=1)]
        for init in red.INITS:
            series.append(Series(COLORS[init], toy["widths"], toy[init], LABELS[init]))
        return Chart(f"Toy, outlier strength {self.outlier_strength:.1f}: eRank after "
                     "projection (dashed: before)", "projected width d'",
                     "eRank of h P", series)

    def live_charts(self) -> list:
        return [self.outlier_view, self.spectrum_view, self.toy_view]

    # ------------------------------------------------------------------ the Run
    @run_chart
    def erank_view(self) -> Chart | None:
        return erank_chart(self._result["students"])

    @run_chart
    def accuracy_view(self) -> Chart | None:
        return accuracy_chart(self._result["students"], _teacher_stats())

    @run_chart("hops")
    def checkpoint_view(self) -> Chart | None:
        return checkpoint_chart(self._result["students"], self.hops)

    def run_charts(self) -> list:
        return [self.erank_view, self.accuracy_view, self.checkpoint_view]

    def plot_data(self) -> dict:
        data = super().plot_data()
        if self._result is not None:
            data["students"] = self._result["students"]
        return data

    def result_note(self) -> str:
        if self._result is None:
            return ("**Distillation:** press **Run** (one student per chosen initialisation, "
                    "distilled on generic text only).")
        ppl = ", ".join(f"{LABELS[i]} {s['curve'][-1]['ppl']:.2f}"
                        for i, s in self._result["students"].items())
        return (f"**Distillation:** {self._result['title']}. Held-out perplexity: {ppl} "
                f"(teacher {_teacher_stats()['ppl']:.2f}). Dotted lines in the eRank view: the "
                "students at init.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed

        def one(init):
            return red.distill(cfg, seed, inits=(init,))[init]

        def keep(results):
            self._result = {"students": dict(zip(cfg.inits, results[1:])),
                            "title": f"d'/d = {self.ratio:g} (d' = {cfg.d_small}), "
                                     f"{cfg.distill_steps} steps, seed {seed}"}

        self.run_stages([("teacher (shipped weights)", _teacher_stats)]
                        + [(f"distil the {LABELS[i]} student ({cfg.distill_steps} steps)",
                            functools.partial(one, i)) for i in cfg.inits], keep)


Explorer = REDExplorer
create_app = app_factory(Explorer, (
    "## RED: activation-aware initialisation for efficient distillation (red)\n\n"
    "He, Tang, Nie, Li, Yang, Du, Sun & Ma, *Reasoning-preserved Efficient Distillation "
    "of LLMs via Activation-aware Initialization*, ICML 2026 "
    "([arXiv 2605.29327](https://arxiv.org/abs/2605.29327)). **Blocked:** with an "
    "outlier teacher (issue 34's second design), RED keeps no more eRank than a random "
    "channel selection and misses the eRank bar on seed 1. Live: the outlier check, the "
    "spectrum of P and a toy; **Run** distils width-64 students from the teacher."))

if __name__.startswith("bokeh"):
    create_app().servable()
