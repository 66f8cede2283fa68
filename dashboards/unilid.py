"""Explorer for "What Language is This? Ask Your Tokenizer." (unilid).

Live view: how much of a language's unigram distribution comes from its k labelled samples
and how much from the prior (the MAP estimate ``(c_L + alpha p_0) / (N + alpha)`` puts weight
``N / (N + alpha)`` on the data, ``N`` the expected number of pieces in the samples).
Behind the Run button (with progress): the shared sentencepiece vocabulary of the chosen
language set, UniLID fitted by EM at k = 1, 2, 5, 10 (up to the chosen k) and the three
baselines tuned on validation samples: accuracy vs k and per-language accuracy.
The module also holds the plot functions the notebook uses for F1-F3.

Serve alone with ``panel serve dashboards/unilid.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

from dataclasses import replace

import holoviews as hv
import numpy as np
import param

from icml26 import unilid
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

METHOD_COLORS = {"UniLID": "#1f77b4", "UniLID (characters)": "#9ecae1",
                 "char NB": "#2ca02c", "char LR": "#98df8a", "fastText": "#d62728"}
PIECES_PER_SAMPLE = 57  # expected pieces per 100+ character sample under the fitted p_L
# (mean over the 22 languages: 59.3 on seed 0, 54.5 on seed 1; per language 40-79)
K_GRID = (1, 2, 5, 10)


# --------------------------------------------------------------------------- plot functions
def accuracy_plot(rows: list[dict], column: str = "accuracy") -> hv.Overlay:
    """F1: accuracy vs k (log axis), one curve per method."""
    ylabel = {"accuracy": "accuracy (all labels)",
              "close_accuracy": "accuracy (close-pair labels)"}[column]
    ks = sorted({r["k"] for r in rows})
    layers = []
    for method in dict.fromkeys(r["method"] for r in rows):
        pts = sorted((r["k"], r[column]) for r in rows if r["method"] == method)
        color = METHOD_COLORS.get(method, "black")
        layers.append(hv.Curve(pts, "labelled samples per language k", ylabel,
                               label=method).opts(color=color)
                      * hv.Scatter(pts, "labelled samples per language k", ylabel)
                      .opts(color=color, size=6))
    return hv.Overlay(layers).opts(
        title=f"Language ID vs labelled samples ({ylabel})", logx=True,
        xticks=[(k, str(k)) for k in ks], legend_position="right",  # outside: never on data
        responsive=True, height=320, ylim=(0, 1.02))


def confusion_plot(data: dict) -> hv.HeatMap:
    """F2: counts of (gold, predicted) over the close-pair labels."""
    cols, labels, m = data["columns"], data["labels"], data["counts"]
    cells = [(cols[j], labels[i], int(m[i, j])) for i in range(len(labels))
             for j in range(len(cols))]
    heat = hv.HeatMap(cells, ["predicted label", "true label"], "test samples")
    return (heat * hv.Labels(heat)).opts(
        hv.opts.HeatMap(cmap="Blues", colorbar=True, responsive=True, height=380,
                        title=f"{data['method']}: close pairs (k = 5)", xrotation=45,
                        invert_yaxis=True, tools=["hover"]),
        hv.opts.Labels(text_font_size="8pt"))


def incremental_plot(data: dict) -> hv.Overlay:
    """F3: each old language's accuracy before and after adding ``data['added']``."""
    langs = [r["language"] for r in data["rows"]]
    before = [(lang, r["before"]) for lang, r in zip(langs, data["rows"])]
    after = [(lang, r["after"]) for lang, r in zip(langs, data["rows"])]
    return (hv.Scatter(before, "language", "accuracy", label="before").opts(
        color="#7f7f7f", size=11)
        * hv.Scatter(after, "language", "accuracy", label=f"after adding {data['added']}")
        .opts(color="#1f77b4", size=6, marker="diamond")).opts(
        title=f"Adding {data['added']}: {data['changed']} old parameters changed",
        legend_position="right", responsive=True, height=320, xrotation=45,
        ylim=(0, 1.05))


LIVE_CAPTION = (
    "*Live:* the MAP estimate p_L = (c_L + alpha p_0) / (N + alpha) puts weight N / (N + alpha) "
    f"on the k labelled samples (N ~ {PIECES_PER_SAMPLE} pieces per sample) and the rest on "
    "the pooled prior p_0; dashed: the paper's alpha = 20. A prior mass applied to every "
    "vocabulary entry instead (alpha x V) drowns the data: the mutation that breaks the "
    "5-shot claim.")


# --------------------------------------------------------------------------- explorer
class UniLIDExplorer(ExplorerBase):
    """Pick the labels and UniLID's settings; Run fits it and the baselines."""

    k = param.Integer(5, bounds=(1, 10),
                      doc="Labelled samples per language (each >= 100 characters of Django "
                          "UI strings); Run evaluates k = 1, 2, 5, 10 up to this value.")
    alpha = param.Number(20.0, bounds=(0.01, 1000.0), softbounds=(0.1, 200.0), step=0.1,
                         doc="Total mass of the MAP prior in pseudo-pieces (centred on the "
                             "pooled sentencepiece distribution; the paper's setting: 20).")
    language_set = param.Selector(default="close12", objects=list(unilid.LANGUAGE_SETS),
                                  doc="Labels: the 12 close-pair labels (fast), 10 distinct "
                                      "languages, or all 22 (the claims; Run takes "
                                      "minutes: fastText is tuned over 36 configs per k).")
    max_len = param.Integer(8, bounds=(1, 8),
                            doc="Longest piece in characters (1 = a character unigram model).")
    vocab_size = param.Selector(default=2000, objects=[500, 1000, 2000, 4000],
                                doc="Pieces of the shared sentencepiece unigram vocabulary.")
    em_iters = param.Integer(3, bounds=(0, 10),
                             doc="EM iterations per language (0 = the prior alone).")
    score = param.Selector(default="marginal", objects=list(unilid.SCORES),
                           doc="Prediction: marginal likelihood over segmentations or the "
                               "best (Viterbi) segmentation.")
    seed = param.Integer(0, bounds=(0, 1000), doc="Seed of the train/test split.")
    run = param.Event(doc="Fit UniLID and the baselines on the chosen labels.")
    RUN_LABEL, LIVE_CAPTION = "Run UniLID", LIVE_CAPTION

    # ------------------------------------------------------------------ model
    def config(self) -> unilid.UniLIDConfig:
        """The lib config of a Run (raises ValueError when invalid)."""
        langs = unilid.LANGUAGE_SETS[self.language_set]
        ks = tuple(k for k in K_GRID if k <= self.k)
        if self.k not in ks:
            ks = (*ks, self.k)
        model = unilid.ModelConfig(vocab_size=self.vocab_size, max_len=self.max_len,
                                   em_iters=self.em_iters, alpha=float(self.alpha),
                                   score=self.score)
        # tune=False: UniLID at the sliders' alpha and EM iterations (the claims tune them on
        # the validation split, as the baselines are tuned)
        cfg = replace(unilid.config_for("quick"), languages=langs, k_grid=ks,
                      claim_k=self.k, model=model, added=langs[-1], tune=False)
        cfg.validate()
        return cfg

    @param.depends("alpha", "max_len", "vocab_size", "em_iters", "score", "language_set",
                   watch=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live view
    @param.depends("k", "alpha")
    def prior_chart(self) -> Chart:
        """Weight of the labelled data in p_L vs k, for this alpha (and alpha = 20)."""
        ks = np.arange(1, 11, dtype=float)
        n = ks * PIECES_PER_SAMPLE
        here = self.k * PIECES_PER_SAMPLE / (self.k * PIECES_PER_SAMPLE + self.alpha)
        return Chart(f"Data weight at k = {self.k}: {here:.2f}", "labelled samples per "
                     "language k", "weight of the data N / (N + alpha)", [
                         # the reference on top, dashed: at alpha = 20 both lines show
                         Series(METHOD_COLORS["UniLID"], ks, n / (n + self.alpha),
                                "chosen alpha"),
                         Series("grey", ks, n / (n + 20.0), "alpha = 20", dash="dashed"),
                         Series("black", [self.k], [here], "chosen k", kind="scatter")])

    def live_charts(self) -> list:
        return [self.prior_chart]

    # ------------------------------------------------------------------ Run results
    @run_chart
    def accuracy_chart(self) -> Chart | None:
        """Accuracy vs k of every method (after Run)."""
        rows = self._result["rows"]
        series = []
        for method, color in METHOD_COLORS.items():
            x = [r["k"] for r in rows if r["method"] == method]
            y = [r["accuracy"] for r in rows if r["method"] == method]
            series += [Series(color, x, y, method), Series(color, x, y, kind="scatter")]
        return Chart("Accuracy vs labelled samples", "labelled samples per language k",
                     "test accuracy", series, x_log=True)

    @run_chart
    def per_language_chart(self) -> Chart | None:
        """Per-language accuracy of UniLID and fastText at the chosen k (after Run)."""
        per = self._result["per_language"]
        x = np.arange(1, len(per["labels"]) + 1, dtype=float)
        return Chart(f"Per language at k = {self._result['k']}", "language",
                     "test accuracy", x_names=dict(zip(x, per["labels"])), series=[
                         Series(METHOD_COLORS["UniLID"], x, per["UniLID"], "UniLID",
                                kind="scatter"),
                         Series(METHOD_COLORS["fastText"], x, per["fastText"], "fastText",
                                kind="scatter")])

    def run_charts(self) -> list:
        return [self.accuracy_chart, self.per_language_chart]

    def result_note(self) -> str:
        if self._result is None:
            return ("**Language ID on Django UI strings:** press **Run** (vocabulary, UniLID "
                    "by EM at the chosen alpha and EM iterations, and the baselines tuned on "
                    "validation samples, fastText over 36 configs per k).")
        return f"**Language ID on Django UI strings** ({self._result['title']})."

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed

        def method_rows(methods):
            return lambda: unilid.figure_accuracy_data(cfg, seed, methods)

        def keep(results):
            _, own, base = results
            rows = own + base
            labels = list(cfg.languages)
            per = {"labels": labels}
            for method in ("UniLID", "fastText"):
                p = unilid.predictions(cfg, seed, self.k, method)
                per[method] = [unilid.accuracy(p["pred"], p["gold"], (c,)) for c in labels]
            self._result = {"rows": rows, "per_language": per, "k": self.k,
                            "title": f"{self.language_set}, alpha {cfg.model.alpha:g}, "
                                     f"pieces <= {cfg.model.max_len}, vocabulary "
                                     f"{cfg.model.vocab_size}, {cfg.model.em_iters} EM "
                                     f"iterations, {cfg.model.score}, seed {seed}"}

        self.run_stages([
            (f"sentencepiece vocabulary ({cfg.model.vocab_size} pieces) of the unlabelled "
             f"train pools", lambda: unilid.vocabulary(cfg, seed)),
            (f"UniLID by EM at k = {', '.join(map(str, cfg.k_grid))}",
             method_rows(("UniLID", "UniLID (characters)"))),
            ("baselines tuned on validation samples (char NB, char LR, fastText)",
             method_rows(("char NB", "char LR", "fastText"))),
        ], keep)


Explorer = UniLIDExplorer
create_app = app_factory(Explorer, (
    "## UniLID: what language is this? Ask your tokenizer (unilid)\n\n"
    "Meister, Yavuz, Lesci & Pimentel, *What Language is This? Ask Your Tokenizer.*, "
    "ICML 2026 ([arXiv 2602.17655](https://arxiv.org/abs/2602.17655)). One unigram "
    "distribution per language over a shared sentencepiece vocabulary, fitted by EM; "
    "Bayes' rule picks the language. Data: Django's translation catalogues. "
    "**Run** fits UniLID and the baselines (fastText, char NB, char LR)."))

if __name__.startswith("bokeh"):
    create_app().servable()
