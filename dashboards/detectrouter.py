"""Explorer for "Minimizing Mismatch Risk: prototype-based routing for zero-shot machine-text
detection" (detectrouter).

Live (each slider step, ~0.1 s): the mismatch in miniature -- a character n-gram *source*
(order, temperature) writes continuations of human prefixes, an n-gram *surrogate* (order)
scores them and held-out human passages with Fast-DetectGPT's analytic criterion; the chart
shows both empirical CDFs and the AUROC.  Behind the Run button (with progress): the paper's
experiment at quick scale -- the zoo trained, sampled and scored for the seed (cached; 1-2 min
the first time), the router fitted with the chosen settings -- and its three figures: the
source x surrogate AUROC matrix, the mixed-set AUROC of every fixed surrogate / the score
ensemble / the router / oracle routing, and the router's choices.
The module also holds the plot functions the notebook uses.

Serve alone with ``panel serve dashboards/detectrouter.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import holoviews as hv
import numpy as np
import panel as pn
import param
import torch

from icml26 import detectrouter as dr
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot
from icml26.dashboards.app.hvstyle import cell_labels

VIEW_HEIGHT = 340
HUMAN, MACHINE = "#1f77b4", "#d62728"
LIVE_CHARS = (96, 32)  # live demo passages: length, human prefix
RESULT_VIEWS = ("matrix_view", "methods_view", "routing_view")


# --------------------------------------------------------------------------- plot functions
def _short(name: str) -> str:
    return name.replace(" docstrings", " docs").replace(" sklearn+docs", " sk+docs")


def auroc_matrix_plot(r: dict, title: str = "AUROC: source (row) x surrogate (column)",
                      ylabel: str = "source (generator)") -> hv.Overlay:
    """F1: AUROC of every (source, surrogate) pair; '(bb)' marks black-box sources (rows from
    ``n_white`` on). The notebook's diagnosis reuses it for other row sets."""
    rows = [_short(s) + (" (bb)" if i >= r["n_white"] else "")
            for i, s in enumerate(r["sources"])]
    cols = [_short(p) for p in r["pool"]]
    m = np.asarray(r["matrix"])
    cells = [(c, rows[i], float(m[i, j])) for i in range(len(rows)) for j, c in enumerate(cols)]
    labels = cell_labels(cells, ["surrogate", "source"], (0, 1), diverging=True)
    return (hv.HeatMap(cells, ["surrogate", "source"], "AUROC").opts(
        cmap="RdBu", clim=(0, 1), colorbar=True, responsive=True, height=VIEW_HEIGHT,
        tools=["hover"], xrotation=20, invert_yaxis=True, framewise=True,
        title=title, xlabel="surrogate (scorer)", ylabel=ylabel)
            * labels)


def method_rows(r: dict) -> list[tuple[str, str, float]]:
    """F2's bars: (method, kind, AUROC on the mixed-source test set). The combinations of the
    pool's z-scores (issue 46) are the baseline at the router's cost; ``*`` marks the one
    chosen on validation."""
    rows = [(f"fixed: {_short(p)}", "fixed surrogate", float(a))
            for p, a in zip(r["pool"], r["fixed"])]
    comb = r.get("combination")
    if comb is None:  # an evaluation from before issue 46: the ensemble only
        rows.append(("score ensemble", "combination", float(r["ensemble"])))
    else:
        rows += [(f"combination: {k}" + (" *" if k == comb["chosen"] else ""), "combination",
                  float(a)) for k, a in comb["test"].items()]
    rows += [("router, stage 1", "DetectRouter", float(r["stage1"]["auroc"])),
             ("router, stage 1+2", "DetectRouter", float(r["stage2"]["auroc"]))]
    if "text" in r:
        rows.append(("router, text only", "DetectRouter, text only", float(r["text"]["auroc"])))
    rows.append(("oracle routing", "oracle", float(r["oracle"])))
    return rows


KIND_COLORS = {"fixed surrogate": "#9e9e9e", "combination": "#ff7f0e", "DetectRouter": "#1f77b4",
               "DetectRouter, text only": "#9467bd", "oracle": "#2ca02c"}


def methods_plot(r: dict) -> hv.Bars:
    """F2: mixed-source AUROC of each fixed surrogate (grey), the combinations of the pool's
    z-scores (orange, ``*`` the one chosen on validation), the router (blue), the text-only
    router (purple) and oracle routing (green)."""
    rows = [(method, auc, kind) for method, kind, auc in method_rows(r)]
    return hv.Bars(rows, "method", ["AUROC (mixed test set)", "kind"]).opts(
        xrotation=30, ylim=(0, 1.05), responsive=True, height=VIEW_HEIGHT,
        color="kind", cmap=KIND_COLORS, show_legend=False, tools=["hover"], framewise=True,
        xlabel="detector", title="Mixed-source AUROC per detector")


def margins_plot(per_seed, title: str = "Margins per seed: over the combination chosen on "
                 "validation, over the best fixed surrogate"):
    """Issue 46: per seed (one point each, one colour per comparison; the bar is the mean),
    the margin of the router and of the text-only router over the combination chosen on
    validation, and of each over the best fixed surrogate; ``per_seed`` is a DataFrame with
    columns ``seed``, ``comparison`` and ``margin`` (the long form of
    ``benchmarks/detectrouter/detectrouter_combination.csv``)."""
    pts = hv.Scatter(per_seed, "comparison", ["margin", "seed"]).opts(
        jitter=0.3, size=7, color="comparison", cmap="Category10", tools=["hover"])
    means = per_seed.groupby("comparison", sort=False)["margin"].mean().reset_index()
    bars = hv.Bars(means, "comparison", "margin").opts(alpha=0.25, color="#555555")
    zero = hv.HLine(0).opts(color="black", line_width=1)
    return (bars * pts * zero).opts(
        responsive=True, height=VIEW_HEIGHT, xrotation=15, show_legend=False, title=title,
        xlabel="comparison (mean bar, one point per seed)", ylabel="AUROC margin")


def routing_plot(r: dict, stage: str = "stage2") -> hv.Overlay:
    """F3: share of each source's texts (and of human texts) routed to each surrogate."""
    rows = [_short(s) + (" (bb)" if i >= r["n_white"] else "")
            for i, s in enumerate(r["sources"])] + ["human"]
    cols = [_short(p) for p in r["pool"]]
    conf = np.asarray(r[stage]["confusion"], float)
    share = conf / conf.sum(1, keepdims=True)
    cells = [(c, rows[i], float(share[i, j])) for i in range(len(rows))
             for j, c in enumerate(cols)]
    labels = cell_labels(cells, ["chosen surrogate", "text from"], (0, 1), diverging=False)
    return (hv.HeatMap(cells, ["chosen surrogate", "text from"], "share routed").opts(
        cmap="Blues", clim=(0, 1), colorbar=True, responsive=True, height=VIEW_HEIGHT,
        tools=["hover"], xrotation=20, invert_yaxis=True, framewise=True,
        title=f"Router's choices ({'stage 1+2' if stage == 'stage2' else 'stage 1'})",
        xlabel="chosen surrogate", ylabel="text from")
            * labels)


# --------------------------------------------------------------------------- live demo
@functools.lru_cache(maxsize=1)
def _live_corpus() -> tuple[np.ndarray, np.ndarray]:
    p = dr.passages("pydoc", LIVE_CHARS[0])
    return p[:400], p[-40:]  # train, held-out human


@functools.lru_cache(maxsize=16)
def _live_lm(order: int) -> dr.NgramLM:
    return dr.NgramLM(order, _live_corpus()[0])


@functools.lru_cache(maxsize=64)
def live_scores(source_order: int, temperature: float, surrogate_order: int, seed: int,
                criterion: str) -> tuple[np.ndarray, np.ndarray]:
    """Criterion of 40 human passages and 40 machine continuations under the surrogate."""
    human = _live_corpus()[1]
    machine = _live_lm(source_order).sample(human[:, : LIVE_CHARS[1]],
                                            LIVE_CHARS[0] - LIVE_CHARS[1], temperature,
                                            torch.Generator().manual_seed(seed))
    lm = _live_lm(surrogate_order)
    return (dr.criterion(lm, human, LIVE_CHARS[1], criterion),
            dr.criterion(lm, machine, LIVE_CHARS[1], criterion))


def cdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xs = np.sort(x)
    return xs, np.arange(1, len(xs) + 1) / len(xs)


LIVE_CAPTION = (
    "*Live (left):* an n-gram source continues 32-character prefixes of 40 held-out pydoc "
    "passages; an n-gram surrogate scores those continuations and the human passages. With "
    "matched orders the machine curve sits to the right (AUROC near 1); a mismatched surrogate "
    "can even rank machine text as more human than human text (AUROC < 0.5). *After Run:* the "
    "quick-scale experiment of the claims for the chosen seed.")


# --------------------------------------------------------------------------- explorer
class DetectRouterExplorer(ExplorerBase):
    """Watch a surrogate mismatch live; Run the routing experiment for a seed."""

    source_order = param.Integer(5, bounds=(1, 7),
                                 doc="Live: order of the n-gram that writes the machine text.")
    source_temperature = param.Number(0.8, bounds=(0.3, 1.5), step=0.05,
                                      doc="Live: sampling temperature of the source "
                                          "(the experiment's white-box sources use 0.8).")
    surrogate_order = param.Integer(5, bounds=(1, 7),
                                    doc="Live: order of the n-gram surrogate that scores "
                                        "human and machine text (match it to the source).")
    criterion = param.Selector(default="fast_detect", objects=list(dr.CRITERIA),
                               doc="Zero-shot criterion: Fast-DetectGPT's analytic curvature "
                                   "or the mean log-likelihood per character.")
    znorm = param.Boolean(True, doc="Run: z-normalise each surrogate's scores on human "
                                    "reference text (off = the pitfall: raw scales mixed).")
    routing = param.Selector(default="prototype", objects=list(dr.ROUTINGS),
                             doc="Run: nearest prototype (DetectRouter) or random routing.")
    temperature = param.Number(1.0, bounds=(0.1, 5.0), step=0.1,
                               doc="Run: prototype temperature T in softmax(-d / T).")
    score_temperature = param.Number(0.1, bounds=(0.02, 2.0), step=0.02,
                                     doc="Run: T_s of the stage-2 target softmax(s / T_s).")
    stage2_weight = param.Number(1.0, bounds=(0.0, 5.0), step=0.25,
                                 doc="Run: weight of the stage-2 KL term (0 = stage 1 only).")
    dim = param.Integer(16, bounds=(2, 64), doc="Run: embedding dimension of the router.")
    seed = param.Integer(0, bounds=(0, 6),
                         doc="Seed of the splits, the zoo and the texts (live demo and Run; "
                             "the first Run of a seed trains the zoo, then it is cached).")
    run = param.Event(doc="Train/score the zoo for this seed (cached), fit the router, and "
                          "draw the three figures.")
    RUN_LABEL, LIVE_CAPTION = "Run routing", LIVE_CAPTION

    def __init__(self, **params):
        self._view_panes: list[dict] = []  # one dict of result panes per rendering
        super().__init__(**params)

    def config(self) -> dr.DetectRouterConfig:
        """The lib config of the Run (raises ValueError when invalid)."""
        base = dr.config_for("quick")
        cfg = replace(base, criterion=self.criterion, znorm=self.znorm, routing=self.routing,
                      router=replace(base.router, temperature=self.temperature,
                                     score_temperature=self.score_temperature,
                                     stage2_weight=self.stage2_weight, dim=self.dim))
        cfg.validate()
        return cfg

    # ------------------------------------------------------------------ live
    @param.depends("source_order", "source_temperature", "surrogate_order", "criterion", "seed")
    def mismatch_chart(self) -> Chart:
        """Empirical CDFs of the criterion on human and machine text under the surrogate."""
        h, m = live_scores(self.source_order, round(self.source_temperature, 3),
                           self.surrogate_order, self.seed, self.criterion)
        a = dr.auroc(h, m)
        xh, yh = cdf(h)
        xm, ym = cdf(m)
        return Chart(f"{self.source_order}-gram source (T = {self.source_temperature:.2f}) "
                     f"scored by a {self.surrogate_order}-gram: AUROC {a:.2f}",
                     f"criterion ({self.criterion})", "fraction of texts with a lower score",
                     [Series(HUMAN, xh, yh, "human (40 pydoc passages)"),
                      Series(MACHINE, xm, ym, "machine (40 continuations)")],
                     height=VIEW_HEIGHT)

    def live_charts(self) -> list:
        return [self.mismatch_chart]

    # ------------------------------------------------------------------ Run
    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed

        def keep(results):
            self._result = {**results[1], "cfg": cfg, "seed": seed}

        self.run_stages([
            (f"zoo for seed {seed}: train 5 surrogates + 2 black-box sources, sample and "
             "score (cached after the first time)", lambda: dr.zoo_data(cfg.zoo, seed)),
            ("router: stage 1, then stage 1+2; AUROCs (cached per settings)",
             lambda: dr.evaluation(cfg, seed)),
        ], keep)

    def result_note(self) -> str:
        if self._result is None:
            return ""
        r, cfg = self._result, self._result["cfg"]
        s1, s2 = r["stage1"], r["stage2"]
        return (f"**Seed {r['seed']}**, criterion {cfg.criterion}, "
                f"{'z-normalised' if cfg.znorm else 'RAW (not z-normalised)'} scores, "
                f"{cfg.routing} routing: router {s2['auroc']:.3f} (stage 1 {s1['auroc']:.3f}), "
                f"oracle routing {r['oracle']:.3f}, best fixed surrogate "
                f"{max(r['fixed']):.3f}; black-box sources {s1['black_auroc']:.3f} "
                f"-> {s2['black_auroc']:.3f} with stage 2. '(bb)' = black-box source.")

    def matrix_view(self) -> hv.Element:
        """F1 after a Run."""
        if self._result is None:
            return message_plot("Press Run: AUROC of every source x surrogate pair")
        return auroc_matrix_plot(self._result)

    def methods_view(self) -> hv.Element:
        """F2 after a Run."""
        if self._result is None:
            return message_plot("Press Run: fixed surrogates vs router vs oracle")
        return methods_plot(self._result)

    def routing_view(self) -> hv.Element:
        """F3 after a Run."""
        if self._result is None:
            return message_plot("Press Run: where the router sends each source's texts")
        return routing_plot(self._result)

    @param.depends("run_done", watch=True)
    def _refresh_views(self) -> None:
        for panes in self._view_panes:
            for name, pane in panes.items():
                pane.object = getattr(self, name)()

    @param.depends("criterion", "znorm", "routing", "temperature", "score_temperature",
                   "stage2_weight", "dim", watch=True)
    def _settings_changed(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def live_rows(self) -> list:
        """The live figure beside F1 (F2 and F3 follow the captions: result_panes)."""
        # a message before Run, a plot after: two element types (a DynamicMap keeps one), so
        # each pane gets its new object when a Run ends (_refresh_views)
        views = {name: pn.pane.HoloViews(getattr(self, name)(), sizing_mode="stretch_width",
                                         height=VIEW_HEIGHT) for name in RESULT_VIEWS}
        self._view_panes.append(views)
        return [pn.Row(*self.live_panes(), views["matrix_view"], sizing_mode="stretch_width")]

    def result_panes(self) -> list:
        views = self._view_panes[-1]  # this rendering's (live_rows comes first)
        return [pn.Row(views["methods_view"], views["routing_view"], sizing_mode="stretch_width")]


Explorer = DetectRouterExplorer
create_app = app_factory(Explorer, (
    "## DetectRouter: prototype-based routing for zero-shot machine-text detection "
    "(detectrouter)\n\n"
    "Sun, Bao, Cui & Zhang, *Minimizing Mismatch Risk: A Prototype-Based Routing Framework "
    "for Zero-shot LLM-generated Text Detection* "
    "([arXiv 2602.01240](https://arxiv.org/abs/2602.01240)). Toy scale: human text from "
    "installed packages, a zoo of character n-gram and tiny GRU LMs trained here. Live: a "
    "surrogate mismatch; **Run**: the routing experiment."))

if __name__.startswith("bokeh"):
    create_app().servable()
