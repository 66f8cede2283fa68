"""Explorer for "How Few-Shot Examples Add Up: A Causal Decomposition of Function Vectors".

Every view is a forward pass of the trained toy-D model (milliseconds): pick a task and a
prompt (shots, fraction of uninformative ``Z -> Z`` demonstrations), corrupt it (zero-shot or
shuffled labels), intervene on the top-k function-vector heads (replace with the task mean,
Todd's additive FV, another task's mean, a random vector), and watch the answer's shift
distribution; compare the QK / V hybrids; look at the FV heads' attention in context vs
isolated. The model is the shipped one of ``model_seed``. **Run** loads it (a seed without
shipped weights is trained once and cached) and computes the paper's F1 for it: accuracy
under each intervention on the FV heads over the claims' evaluation prompts
(``fvlib.figure_interventions_data``: the claims' numbers, cached), a figure the live views
do not have. The notebook's figures are in ``dashboards/function_vectors_figures.py``.

Unless the registry says ``reproduced``, the page says at the top what the status is and on
which seeds which binding claims fail (:func:`status_note`, computed from
``benchmarks/function_vectors/function_vectors_seeds.csv``).

Serve alone with ``panel serve dashboards/function_vectors.py`` or via ``icml26 serve``.
"""

from __future__ import annotations

import functools
from pathlib import Path

import holoviews as hv
import numpy as np
import panel as pn
import param

from icml26 import function_vectors as fvlib
from icml26 import papers
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot, rows
from icml26.dashboards.function_vectors_figures import (  # noqa: F401 - the notebook's figures
    MODE_LABELS,
    plot_additivity,
    plot_aie,
    plot_diagnosis,
    plot_interventions,
    plot_qkv,
    plot_reweighting,
    plot_training,
)

#: the tick label of a demonstration's kind (lib codes 0, 1, 2: absent, informative, Z demo)
KIND_SHORT = {0: "absent", 1: "inform.", 2: "Z"}
VIEW_HEIGHT = 300  # px: HoloViews views get a fixed height and the row's width
FIXED = {"responsive": True, "height": VIEW_HEIGHT, "framewise": True}  # their options

SEEDS_CSV = (Path(__file__).resolve().parents[1] / "benchmarks" / "function_vectors"
             / "function_vectors_seeds.csv")


def status_note(path=SEEDS_CSV) -> str:
    """The registry's status of the paper and, from the per-seed record, on which seeds every
    binding claim holds and where each failing one fails (computed, never typed: the page
    shows what the record says)."""
    rows = fvlib.read_designs({"the design": path}) if path.exists() else []
    seeds, failing = sorted(r["seed"] for r in rows), {}
    for r in sorted(rows, key=lambda r: r["seed"]):
        for claim in r["failing"]:  # a gated claim (not measured: NaN) counts as failing
            failing.setdefault(claim, []).append(r["seed"])
    status = papers.get("function_vectors").status
    if not failing:
        return f"**Status: {status}.** Every binding claim holds on every recorded seed."
    bad = {s for v in failing.values() for s in v}
    good = [s for s in seeds if s not in bad]
    lines = [f"- `{c}` ({len(v)} of {len(seeds)}): seeds {', '.join(map(str, v))}"
             for c, v in sorted(failing.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    return (f"**Status: {status}.** Every binding claim holds on {len(good)} of the "
            f"{len(seeds)} recorded seeds ({', '.join(map(str, good)) or 'none'}; `benchmarks/"
            "function_vectors/function_vectors_seeds.csv`: 0-6 shipped, the others trained in "
            "place). Where the failing ones fail:\n\n" + "\n".join(lines) + "\n\nPick "
            "`model_seed` and press Run to see a seed's model.")


@functools.lru_cache(maxsize=8)
def _analysis(seed: int, allow_train: bool) -> dict:
    """Model, task means and head ranking for ``seed`` (cache, else shipped, else train)."""
    return fvlib.model_analysis(fvlib.config_for("quick"), seed, progress=False,
                                allow_shipped=True, allow_train=allow_train)


COUNT = 48  # prompts per live evaluation


@functools.lru_cache(maxsize=256)
def _prompt_part(seed: int, key: tuple) -> dict:
    a = _analysis(seed, False)
    return fvlib.live_prompt_data(a["model"], a["ranking"], *key, count=COUNT)


@functools.lru_cache(maxsize=512)
def _intervention_part(seed: int, key: tuple) -> dict:
    a = _analysis(seed, False)
    return fvlib.live_intervention_data(a["model"], a["means"], a["ranking"], *key,
                                        count=COUNT)


class FunctionVectorsExplorer(ExplorerBase):
    """Intervene on the function-vector heads of a small trained Transformer."""

    task = param.Integer(3, bounds=(1, 8), doc="Task: the shift k in y = x + k mod 16.")
    n_shots = param.Integer(4, bounds=(0, 6), doc="Demonstrations in the prompt (the model "
                                                 "was trained on 0-6).")
    p_uninformative = param.Number(0.5, bounds=(0.0, 1.0), step=0.05,
                                   doc="Probability that a demonstration is an uninformative "
                                       "Z -> Z pair (consistent with every task).")
    fv_heads = param.Integer(3, bounds=(1, 4), doc="Number of FV heads: the top-k heads by "
                                                   "signed average indirect effect.")
    intervention = param.Selector(default="replace", objects=["none", *fvlib.INTERVENTIONS],
                                  doc="At the final token: replace the FV heads' outputs with "
                                      "the task mean, add Todd's FV to the residual, use "
                                      "another task's mean, or a random vector of equal norm.")
    fv_scale = param.Number(1.0, bounds=(0.0, 3.0), step=0.1,
                            doc="Scale of the injected vector (1 = the mean itself).")
    corruption = param.Selector(default="zero_shot", objects=list(fvlib.CORRUPTIONS),
                                doc="Prompt the intervention acts on: no demonstrations, or "
                                    "the same demonstrations with shuffled labels.")
    decomposition = param.Selector(default="both", objects=list(fvlib.DECOMPOSITIONS),
                                   doc="QK/V hybrid of the clean prompt's FV-head outputs "
                                       "injected into zero-shot prompts (shift plot).")
    show_attention = param.Boolean(False, doc="Show the top FV head's full attention matrix "
                                              "instead of the per-demonstration masses.")
    prompt_seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the prompt draws.")
    model_seed = param.Integer(0, bounds=(0, max(fvlib.SHIPPED_SEEDS)),
                               doc="Seed of the trained model (shipped weights for 0-"
                                   f"{max(fvlib.SHIPPED_SEEDS)}); press Run to load it.")
    run = param.Event(doc="Load the model of model_seed and compute the paper's F1 for it: "
                          "accuracy under each intervention over the claims' evaluation "
                          "prompts (seconds once cached).")
    RUN_LABEL = "Run: load model seed, compute F1"

    _PROMPT = ("task", "n_shots", "p_uninformative", "fv_heads", "prompt_seed", "run_done")
    RUN_STATE = ("_loaded_seed", "_f1", "_f1_seed")  # what a Run keeps (and its record)

    def __init__(self, **params):
        self._loaded_seed = 0
        self._f1, self._f1_seed = None, 0  # the Run's F1 data (figure_interventions_data)
        self._alert = pn.pane.Alert("", alert_type="warning", visible=False)
        self._status = pn.pane.Alert(status_note(), alert_type="warning",
                                     visible=papers.get("function_vectors").status != "reproduced",
                                     sizing_mode="stretch_width")
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def config(self) -> fvlib.FVConfig:
        """The lib config behind the model (the quick scale; the knobs are forward-pass
        arguments of :func:`icml26.function_vectors.live_data`)."""
        return fvlib.config_for("quick")

    def _prompt_key(self) -> tuple:
        return (self.task, self.n_shots, float(self.p_uninformative), self.fv_heads)

    def _part(self, part, *key) -> dict | None:
        """``part`` (cached per setting) of the loaded model at the prompt settings and
        ``key``, or None once the alert says why it failed."""
        try:
            return part(self._loaded_seed, (*self._prompt_key(), *key, self.prompt_seed))
        except (ValueError, RuntimeError) as e:
            self._show(str(e), "danger")
            return None

    def _prompts(self) -> dict | None:
        """Prompt-side data (clean accuracy, QK/V hybrids, attention)."""
        return self._part(_prompt_part)

    def _intervention(self) -> dict | None:
        """The corrupted prompts with and without the intervention."""
        return self._part(_intervention_part, self.intervention, float(self.fv_scale),
                          self.corruption)

    def _show(self, text: str, kind: str = "warning") -> None:
        self._alert.object, self._alert.alert_type, self._alert.visible = text, kind, bool(text)

    def plot_data(self) -> dict:
        """The numbers behind the views."""
        p, d = self._prompts(), self._intervention()
        if p is None or d is None:
            return {}
        a = _analysis(self._loaded_seed, False)
        return {
            "accuracy": np.array([p["clean_accuracy"], *d["accuracy"].values()]),
            "p_correct": np.array([p["clean_p_correct"], *d["p_correct"].values()]),
            "shift_corrupted": d["shift_corrupted"].numpy(),
            "shift_intervened": d["shift_intervened"].numpy(),
            "shift_hybrid": p["hybrid_shift"][self.decomposition].numpy(),
            "hybrid_accuracy": np.array(list(p["hybrid_accuracy"].values())),
            "attention_query": p["attention_query"].numpy(),
            "attention_matrix": p["attention_matrix"].numpy(),
            "mass_ctx": p["mass_ctx"].numpy(), "mass_iso": p["mass_iso"].numpy(),
            "aie": a["aie"].numpy(),
        }

    # ------------------------------------------------------------------ views
    # the shift distribution is a live Chart (drawn once, updated in place, axes follow the
    # data); bars and heatmaps stay HoloViews DynamicMaps with a fixed height, the row's
    # width and framewise axes. Everything follows run_done (the model a Run loaded).
    @param.depends(*_PROMPT, "intervention", "fv_scale", "corruption", "decomposition")
    def shift_chart(self) -> Chart | None:
        """Mean probability of answering x_q + j: the task the model executes, on the
        corrupted prompts, with the intervention, and with the chosen QK/V hybrid injected
        into zero-shot prompts."""
        p, d = self._prompts(), self._intervention()
        if p is None or d is None:
            return None
        j = np.arange(len(d["shift_corrupted"]), dtype=float)
        return Chart("Which shift does the model apply?", "shift j (answer x_q + j mod 16)",
                     "p(answer = x_q + j)", [
                         Series("#7f7f7f", j, d["shift_corrupted"].numpy(), self.corruption),
                         Series("#1f77b4", j, d["shift_intervened"].numpy(),
                                f"+ {self.intervention}"),
                         Series("#d62728", j, p["hybrid_shift"][self.decomposition].numpy(),
                                f"{MODE_LABELS[self.decomposition]} hybrid", dash="dotted"),
                         Series("black", kind="vline", at=float(self.task), dash="dashed",
                                width=1)], height=VIEW_HEIGHT)

    def live_charts(self) -> list:
        return [self.shift_chart]

    @param.depends(*_PROMPT, "intervention", "fv_scale", "corruption")
    def accuracy_view(self) -> hv.Element:
        """Accuracy on the true task: clean prompt, corrupted, corrupted + intervention."""
        p, d = self._prompts(), self._intervention()
        # no bars where the alert says why (a DynamicMap keeps one element type)
        bars = [] if p is None or d is None else [
            (f"clean {self.n_shots}-shot", p["clean_accuracy"]),
            (self.corruption, d["accuracy"]["corrupted"]),
            (f"{self.corruption} + {self.intervention}", d["accuracy"]["intervened"])]
        heads = "none" if p is None else ", ".join(f"({a},{b})" for a, b in p["heads"])
        return hv.Bars(bars, "prompt", "accuracy on the true task").opts(
            ylim=(0, 1.05), title=f"Task k={self.task}; FV heads {heads}", color="#1f77b4",
            **FIXED)

    @param.depends(*_PROMPT, "decomposition")
    def decomposition_view(self) -> hv.Element:
        """FV quality of the QK/V hybrids of the clean prompts (zero-shot injection)."""
        p = self._prompts()
        bars = [] if p is None else [
            (MODE_LABELS[m], v, "selected" if m == self.decomposition else "other")
            for m, v in p["hybrid_accuracy"].items()]
        return hv.Bars(bars, "QK/V hybrid injected", ["zero-shot accuracy", "selected"]).opts(
            ylim=(0, 1.05), title="QK vs V hybrids", color="selected", show_legend=False,
            cmap={"selected": "#d62728", "other": "#1f77b4"}, **FIXED)

    @param.depends(*_PROMPT, "show_attention")
    def attention_view(self) -> hv.Element:
        """FV heads' attention at the query of the first prompt: per demonstration (in
        context vs isolated) or the top head's full matrix."""
        d = self._prompts()
        if d is None:
            return message_plot("no data")
        if self.show_attention:
            m = d["attention_matrix"].numpy()
            t = m.shape[0]
            cells = [(j, i, float(m[i, j])) for i in range(t) for j in range(t)]
            return hv.HeatMap(cells, ["key position", "query position"], "attention").opts(
                cmap="viridis", title=f"Head {d['heads'][0]}: attention (prompt 0)",
                invert_yaxis=True, colorbar=True, **FIXED)
        # short tick labels: slot and kind, then ctx (in context) / iso (isolated)
        rows = [(f"{slot + 1}: {KIND_SHORT[int(k)]}", where,
                 float(d[f"mass_{where}"][slot]))
                for slot, k in enumerate(d["kinds"]) for where in ("ctx", "iso")]
        rows.append(("query", "ctx", float(d["mass_ctx"][-1])))
        return hv.Bars(rows, ["demonstration slot: kind", "in context / isolated"],
                       "attention mass of the FV heads").opts(
            title="Attention per demonstration", ylim=(0, 1.05), multi_level=True, **FIXED)

    @param.depends("run_done", "fv_heads")
    def aie_view(self) -> hv.Element:
        """F1: signed average indirect effect of every head (shuffled 6-shot prompts)."""
        a = _analysis(self._loaded_seed, False)
        return plot_aie({"aie": a["aie"].numpy(), "top": a["ranking"][: self.fv_heads]})

    @param.depends("run_done")
    def interventions_view(self) -> hv.Element:
        """The Run's F1: accuracy under each intervention, zero-shot and shuffled prompts."""
        if self._f1 is None:
            return message_plot("Press Run: the paper's F1 for the seed")
        return plot_interventions(self._f1)

    def result_note(self) -> str:
        if self._f1 is None:
            return ("**Run** loads the model of *model_seed* and computes the paper's F1 for "
                    "it: accuracy on the true task under each intervention on the FV heads, "
                    "over the claims' evaluation prompts.")
        gain, k = self._f1["gain"], self.config().top_k
        top = f"replace top-{k}"
        return (f"**Run result, model seed {self._f1_seed}** (the claims' F1): replacing the "
                f"top-{k} FV heads' outputs with the task mean lifts "
                f"zero-shot accuracy by {gain[('zero_shot', top)]:+.2f} and shuffled 6-shot "
                f"accuracy by {gain[('shuffled', top)]:+.2f} over the corrupted baseline; "
                f"clean 6-shot accuracy {self._f1['clean']:.2f}.")

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config): load the model, compute F1."""
        seed = self.model_seed
        label = (f"the model of seed {seed} (shipped weights) and its heads ranked by AIE"
                 if seed in fvlib.SHIPPED_SEEDS else
                 f"the model of seed {seed} (not shipped: trained, about 1-3 minutes)")

        def keep(results: list) -> None:
            self._loaded_seed, self._f1, self._f1_seed = seed, results[1], seed
            self._show("")

        self.run_stages([(label, lambda: _analysis(seed, True)),
                         ("F1: accuracy under each intervention on the FV heads (zero-shot "
                          "and shuffled prompts)", lambda: fvlib.figure_interventions_data(
                              cfg, seed))], keep)

    @param.depends("model_seed", "run_done", watch=True, on_init=True)
    def _seed_changed(self) -> None:
        if self.model_seed != self._loaded_seed:
            self._show(f"Showing the model of seed {self._loaded_seed}; press Run to load "
                       f"seed {self.model_seed}.", "info")
        elif self._alert.alert_type == "info":
            self._show("")

    # ------------------------------------------------------------------ layout
    def alert_panes(self) -> list:
        return [self._status, self._alert]  # the paper's status above the settings' alert

    def _view(self, name: str, height: int = VIEW_HEIGHT, dynamic: bool = True):
        """A HoloViews view; not a DynamicMap (which keeps one element type) where the view
        swaps types (bars or a heatmap, a message or a plot): re-rendered then."""
        method = getattr(self, name)
        return pn.pane.HoloViews(hv.DynamicMap(method), sizing_mode="stretch_width",
                                 height=height) if dynamic else \
            pn.panel(method, sizing_mode="stretch_width", height=height)

    def live_rows(self) -> list:
        return rows([self._view("accuracy_view"), *self.live_panes()])

    def result_panes(self) -> list:
        return rows([self._view("aie_view"), self._view("interventions_view", 340, False),
                     self._view("decomposition_view"), self._view("attention_view",
                                                                  dynamic=False)])


Explorer = FunctionVectorsExplorer
create_app = app_factory(Explorer, (
    "## Function vectors: how few-shot examples add up\n\n"
    "Wang, Wang, Bakalova, Hahn, *How Few-Shot Examples Add Up: A Causal Decomposition "
    "of Function Vectors in In-Context Learning*, ICML 2026 "
    "([arXiv 2605.16591](https://arxiv.org/abs/2605.16591)), on a 3-layer Transformer "
    "trained here on shift tasks (toy D, with the TVP auxiliary loss - a toy-only "
    "device). Every plot is a forward pass of that model."))

if __name__.startswith("bokeh"):
    create_app().servable()
