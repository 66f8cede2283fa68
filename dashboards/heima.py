"""Explorer for "Efficient Reasoning with Hidden Thinking" (heima).

Live views (analytic, instant): the tokens each model generates vs hops (no-CoT, verbose CoT,
Heima), and the depth argument -- a thinking token adds a position, not layers, so the answer
position still needs ``h + 1`` serial steps (read ``x0``, then ``h`` lookups) inside the
encoder's depth. Behind the Run button (with progress, cached per setting): train no-CoT, CoT,
Heima and pause tokens at the chosen hops and sizes (optionally the progressive schedule),
then show accuracy vs generated tokens, the interpreter's per-stage accuracy from real vs
shuffled thinking states, and Heima's training curve. The module also holds the plot
functions the notebook uses for F1-F4.

Serve alone with ``panel serve dashboards/heima.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import numpy as np
import param

from icml26 import heima
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart
from icml26.dashboards.app.run_costs import duration, recorded_run, recorded_run_words

#: CoT trains twice the steps of the other models (the start of Heima and pause tokens)
STEP_UNITS = {"cot": 2}

COLORS = {"nocot": "#7f7f7f", "cot": "#d62728", "heima": "#1f77b4", "pause": "#ff7f0e",
          "progressive": "#2ca02c"}


# --------------------------------------------------------------------------- charts (F1-F4)
def pareto_chart(rows: list[dict], title: str = "Accuracy vs generated tokens") -> Chart:
    """F1: one point per model (log token axis: CoT emits 5x more); grey: the best accuracy
    reached with at most that many tokens (the Pareto front); dashed: CoT's accuracy."""
    pts = sorted((r["generated_tokens"], r["accuracy"]) for r in rows)
    front_x, front_y, best = [], [], -1.0
    for x, y in pts:
        best = max(best, y)
        front_x.append(x)
        front_y.append(best)
    series = [Series("lightgrey", front_x, front_y, "best so far", width=6)]
    series += [Series(COLORS[r["kind"]], [r["generated_tokens"]], [r["accuracy"]], r["model"],
                      kind="scatter") for r in rows]
    series += [Series(COLORS["cot"], kind="hline", at=r["accuracy"], dash="dashed", width=1)
               for r in rows if r["kind"] == "cot"]
    return Chart(title, "generated tokens per answer", "answer accuracy", series, x_log=True)


def gap_chart(rows: list[dict], shuffled: bool = True,
              title: str = "Interpreter: real vs shuffled states") -> Chart:
    """F2: the interpreter's content accuracy per stage; dashed: shuffled states; dotted
    grey: chance (1/M)."""
    series = []
    for kind in dict.fromkeys(r["kind"] for r in rows):
        pts = [r for r in rows if r["kind"] == kind]
        x = [r["stage"] for r in pts]
        name = heima.LABELS[kind]
        series += [Series(COLORS[kind], x, [r["real"] for r in pts], f"{name}, real"),
                   Series(COLORS[kind], x, [r["real"] for r in pts], kind="scatter")]
        if shuffled:
            series.append(Series(COLORS[kind], x, [r["shuffled"] for r in pts],
                                 f"{name}, shuffled", dash="dashed"))
    if rows:
        series.append(Series("grey", kind="hline", at=rows[0]["chance"], dash="dotted",
                             width=1))
    return Chart(title, "stage (hop)", "content-token accuracy", series)


def hop_limit_chart(rows: list[dict], title: str = "The hop limit") -> Chart:
    """F3: answer accuracy vs hops per model."""
    series = []
    for kind in dict.fromkeys(r["kind"] for r in rows):
        pts = sorted((r["hops"], r["accuracy"]) for r in rows if r["kind"] == kind)
        x, y = [p[0] for p in pts], [p[1] for p in pts]
        series += [Series(COLORS[kind], x, y, heima.LABELS[kind]),
                   Series(COLORS[kind], x, y, kind="scatter")]
    return Chart(title, "hops", "answer accuracy", series)


def curves_chart(rows: list[dict], title: str = "Training: scratch vs progressive") -> Chart:
    """F4: held-out answer accuracy during training (progressive: in its phase's format)."""
    series = []
    for kind in dict.fromkeys(r["kind"] for r in rows):
        pts = [r for r in rows if r["kind"] == kind]
        series.append(Series(COLORS[kind], [r["step"] for r in pts],
                             [r["accuracy"] for r in pts], heima.LABELS[kind]))
    return Chart(title, "training step", "answer accuracy (held out)", series)


DASHES = ("dotted", "dashed", "solid")  # early -> final checkpoint


def probe_chart(rows: list[dict], hops: int, stage: int, target: str,
                title: str | None = None) -> Chart:
    """The diagnosis (issue 34): linear-probe accuracy of ``target`` from every layer at
    stage ``stage``'s writing position (CoT: ``GIVES``; Heima and pause: ``T_k``), one
    colour per model, dotted -> solid over the training checkpoints; dotted grey: chance."""
    pts = [r for r in rows if r["hops"] == hops and r["stage"] == stage and
           r["target"] == target]
    steps = sorted({r["step"] for r in pts})
    series = []
    for kind in dict.fromkeys(r["kind"] for r in pts):
        for i, step in enumerate(steps):
            sel = sorted((r["layer"], r["probe_accuracy"]) for r in pts
                         if r["kind"] == kind and r["step"] == step)
            final = i == len(steps) - 1
            series.append(Series(COLORS[kind], [p[0] for p in sel], [p[1] for p in sel],
                                 f"{heima.LABELS[kind]}, step {step}",
                                 dash=DASHES[max(0, len(DASHES) - len(steps) + i)],
                                 width=2.5 if final else 1.5))
    series.append(Series("grey", kind="hline", at=1 / 8, dash="dotted", width=1))
    return Chart(title or f"{hops} hop{'s' * (hops > 1)}: {target} at stage {stage}",
                 "layer (0 = input)", f"probe accuracy of {target}", series)


LIVE_CAPTION = (
    "*Left:* tokens generated per answer: no-CoT emits `ANS y`, verbose CoT a 10-token "
    "sentence per hop, Heima one thinking token per hop. *Right:* a thinking token's state "
    "is visible to later positions only through lower layers, so any one position still "
    "needs h + 1 serial steps (read x0, then one lookup per hop) within the encoder's depth "
    "(dashed); CoT text resets that count at every stage.")


# --------------------------------------------------------------------------- explorer
class HeimaExplorer(ExplorerBase):
    """Choose the task and the models; Run trains them and reads their thinking states."""

    hops = param.Integer(2, bounds=(1, heima.MAX_HOPS),
                         doc="Hops h of the task: the answer is P^h(x0). The binding claims "
                             "use 2; 3 is the limit at 4 layers.")
    n_layers = param.Integer(4, bounds=(1, 6),
                             doc="Encoder depth (layers). A thinking token adds positions, "
                                 "not layers.")
    d_model = param.Selector(default=32, objects=[16, 32, 64],
                             doc="Encoder width (2 heads).")
    interp_layers = param.Integer(2, bounds=(1, 4),
                                  doc="Interpreter size: layers of the MLP that decodes a "
                                      "thinking state into its stage's 10 tokens.")
    steps = param.Integer(600, bounds=(100, 3000), step=100,
                          doc="Training steps per model (batch 64; the claims use 600; CoT "
                              "trains twice as many).")
    progressive = param.Boolean(False, doc="Also train the paper's progressive schedule "
                                           "(CoT first, then one stage per phase).")
    cot_frac = param.Number(0.4, bounds=(0.1, 0.9), step=0.05,
                            doc="Progressive: share of the steps spent on full CoT first.")
    interp_weight = param.Number(1.0, bounds=(0.0, 5.0), step=0.25,
                                 doc="Weight of the interpreter loss in Heima's joint loss "
                                     "(0 turns Heima into pause tokens).")
    from_cot = param.Boolean(True, doc="Second design (issue 34): Heima and pause tokens "
                                       "start from the trained CoT model (trained for twice "
                                       "the steps), as the paper's progressive encoding does.")
    dense_weight = param.Number(1.0, bounds=(0.0, 5.0), step=0.25,
                                doc="Second design: weight of the dense target pulling each "
                                    "thinking state towards the CoT model's state where it "
                                    "writes that stage's result (needs from_cot).")
    detach = param.Boolean(False, doc="Detach the thinking state before the interpreter "
                                      "(the encoder gets no gradient from it).")
    shuffle_control = param.Boolean(True, doc="Show the interpreter on thinking states "
                                              "shuffled across prompts (the control).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of initialisation and data.")
    run = param.Event(doc="Train the models at these settings (cached) and evaluate them.")
    RUN_LABEL, LIVE_CAPTION = "Run training", LIVE_CAPTION

    def config(self) -> heima.HeimaConfig:
        """The lib config of these settings (raises ValueError when invalid)."""
        cfg = heima.HeimaConfig(hops=self.hops, limit_hops=(self.hops,), steps=self.steps,
                                d_model=self.d_model, n_layers=self.n_layers,
                                interp_layers=self.interp_layers,
                                interp_weight=self.interp_weight, detach=self.detach,
                                cot_frac=round(self.cot_frac, 4), from_cot=self.from_cot,
                                dense_weight=self.dense_weight if self.from_cot else 0.0,
                                cot_steps=2 * self.steps)
        cfg.validate()
        return cfg

    @param.depends("hops", "n_layers", "d_model", "steps", "cot_frac", watch=True, on_init=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    @param.depends("hops")
    def tokens_chart(self) -> Chart:
        """Generated tokens vs hops per format (stage text: 10 tokens per hop)."""
        h = np.arange(1, heima.MAX_HOPS + 1)
        series = []
        for kind, fmt in (("nocot", "nocot"), ("cot", "cot"), ("heima", "heima")):
            y = [heima.generated_len(fmt, int(k)) for k in h]
            series += [Series(COLORS[kind], h, y, heima.LABELS[kind]),
                       Series(COLORS[kind], [self.hops], [heima.generated_len(fmt, self.hops)],
                              kind="scatter")]
        ratio = heima.generated_len("cot", self.hops) / heima.generated_len("heima", self.hops)
        return Chart(f"Tokens: CoT / Heima = {ratio:.1f}x at h = {self.hops}", "hops",
                     "generated tokens", series)

    @param.depends("hops", "n_layers")
    def depth_chart(self) -> Chart:
        """Serial steps one position needs (read x0, then one lookup per hop) vs depth."""
        h = np.arange(1, heima.MAX_HOPS + 1)
        need = h + 1
        ok = "fits" if self.hops + 1 <= self.n_layers else "does not fit"
        return Chart(f"h = {self.hops} needs {self.hops + 1} layers: {ok}", "hops",
                     "layers", [
                         Series(COLORS["heima"], h, need, "steps needed at one position"),
                         Series(COLORS["heima"], [self.hops], [self.hops + 1], kind="scatter"),
                         Series("black", kind="hline", at=self.n_layers, dash="dashed",
                                width=1)])

    def live_charts(self) -> list:
        return [self.tokens_chart, self.depth_chart]

    # ------------------------------------------------------------------ the Run
    def kinds(self) -> tuple[str, ...]:
        return ("nocot", "cot", "heima", "pause") + (("progressive",) if self.progressive
                                                      else ())

    @run_chart
    def pareto_view(self) -> Chart | None:
        return pareto_chart(self._result["pareto"])

    @run_chart("shuffle_control")
    def gap_view(self) -> Chart | None:
        return gap_chart(self._result["gap"], self.shuffle_control)

    @run_chart
    def curve_view(self) -> Chart | None:
        return curves_chart(self._result["curves"], "Training curves (held out)")

    def run_charts(self) -> list:
        return [self.pareto_view, self.gap_view, self.curve_view]

    def plot_data(self) -> dict:
        data = super().plot_data()
        if self._result is not None:
            data.update({k: self._result[k] for k in ("pareto", "gap", "curves")})
        return data

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed, kinds = self.seed, self.kinds()

        def fit(kind):
            return lambda: heima.trained(cfg, kind, seed)

        def keep(_results):
            with_curve = tuple(k for k in ("heima", "progressive") if k in kinds)
            rows = heima.figure_curves_data(cfg, seed) if "progressive" in kinds else \
                [{"kind": "heima", "model": heima.LABELS["heima"], **p}
                 for p in heima.trained(cfg, "heima", seed)["curve"]]
            self._result = {
                "pareto": heima.figure_pareto_data(cfg, seed, kinds),
                "gap": heima.figure_information_gap_data(cfg, seed),
                "curves": [r for r in rows if r["kind"] in with_curve],
                "title": f"h = {cfg.hops}, {cfg.n_layers} layers, d = {cfg.d_model}, "
                         f"{cfg.steps} steps, interpreter weight {cfg.interp_weight:g}"
                         f"{', from CoT' if cfg.from_cot else ', from scratch'}"
                         f"{f' + dense target {cfg.dense_weight:g}' if cfg.from_cot else ''}"
                         f"{', detached' if cfg.detach else ''}, seed {seed}"}

        self.run_stages([(f"train {heima.LABELS[k]} ({cfg.steps} steps, h = {cfg.hops})",
                          fit(k)) for k in kinds], keep)

    def plan_note(self) -> str:
        """What a Run at the current settings costs, said before it: read from the cache,
        or trained (and how long, scaled from the recorded default Run by training steps)."""
        try:
            cfg = self.config()
        except ValueError:
            return ""
        quick = heima.config_for("quick")  # same models, same cache entries as the claims
        claims = cfg.eval_n == quick.eval_n and all(
            cfg.train_config(k) == quick.train_config(k) for k in self.kinds())
        whose = "the claims' models" if claims else "not the claims' models"
        todo = [k for k in self.kinds() if not heima.in_cache(cfg, k, self.seed)]
        if not todo:
            return (f"**This Run** ({whose}) reads its {len(self.kinds())} models from the "
                    "cache: seconds.")
        text = (f"**This Run** ({whose}) trains {len(todo)} of {len(self.kinds())} models "
                f"(not in the cache)")
        cost = recorded_run("heima")
        if cost is not None:
            default = quick.steps
            per_step = cost["cpu_s"] / (default * sum(STEP_UNITS.get(k, 1)
                                                      for k in ("nocot", "cot", "heima", "pause")))
            steps = cfg.steps * sum(STEP_UNITS.get(k, 1) for k in todo)
            text += (f": about {duration(per_step * steps)} on an idle core at d = 32 "
                     f"({recorded_run_words(cost)})")
        return text + ", then caches them."

    def result_note(self) -> str:
        if self._result is None:
            return ("**Trained models:** press **Run** to train no-CoT, CoT, Heima and pause "
                    "tokens at these settings (the line under the Run button says how long; "
                    "cached).")
        return f"**Trained models** ({self._result['title']})."


Explorer = HeimaExplorer
create_app = app_factory(Explorer, (
    "## Heima: efficient reasoning with hidden thinking (heima)\n\n"
    "*Efficient Reasoning with Hidden Thinking*, ICML 2026 "
    "([arXiv 2501.19201](https://arxiv.org/abs/2501.19201)). A tiny transformer follows "
    "a permutation for h hops; Heima replaces each verbose CoT stage by one thinking "
    "token that an interpreter decodes back into the stage. Live: token cost and depth; "
    "**Run** trains the models."))

if __name__.startswith("bokeh"):
    create_app().servable()
