"""Explorer for "The Hippocampal Place Field Gradient" (place_fields) and HIPE.

Live views (analytic, ms): a place field (1-D or 2-D), FWHM and few-shot error against sigma,
HIPE's kernels per head sigma against RoPE.  F4 (toy LM, HIPE - RoPE after adaptation) comes
from the cache or the shipped seeds 0-4, never retrained; its title states the verdict,
computed from the claim's values.  ``panel serve dashboards/place_fields.py`` or ``icml26
serve``.
"""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Callable

import holoviews as hv
import numpy as np
import panel as pn
import param
from bokeh.palettes import Category10_10

from icml26 import estimates
from icml26 import place_fields as pf
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot
from icml26.place_fields import lm
from icml26.place_fields.hipe import parse_sigmas  # noqa: F401 (dash.parse_sigmas)

DECAY_COLORS = {"gaussian": "#1f77b4", "exp": "#ff7f0e", "power": "#2ca02c"}
VARIANT_COLORS = {"rope": "#7f7f7f", "hipe_single": "#ff7f0e", "hipe_multi": "#1f77b4"}
HEAD_COLORS = [c for c in Category10_10 if c != "#7f7f7f"]  # one per head sigma; RoPE is grey
FWHM_SIGMAS = tuple(np.round(np.linspace(0.0, 0.5, 26), 4))  # the FWHM curve of the app
LIVE_SIGMAS = tuple(float(v) for v in np.round(np.geomspace(0.005, 0.3, 14), 6))
DELTA, KERNEL = "relative distance Delta", "K(Delta)/K(0)"


# --------------------------------------------------------------------------- cached compute
_fwhm_curve = functools.lru_cache(maxsize=64)(
    functools.partial(pf.figure_field_gradient_data, shown=False))
_field = functools.lru_cache(maxsize=64)(pf.field_data)
_tradeoff = functools.lru_cache(maxsize=64)(pf.figure_tradeoff_data)
_kernels = functools.lru_cache(maxsize=64)(pf.head_kernels)
_f4_frame = functools.lru_cache(maxsize=4)(lambda cache_dir: lm.cached_or_shipped_frame())


def f4_frame():
    """The F4 table for seeds 0-4 from the cache if every seed is there, else shipped."""
    return _f4_frame(os.environ.get("ICML26_CACHE", ""))


# --------------------------------------------------------------------------- figure plots
def plot_field_gradient(data: dict) -> hv.Overlay:
    """F1 (left): min-max normalised fields along the track for several sigma."""
    return hv.Overlay([hv.Curve((data["x"], f), "position (m)", "normalised rate",
                                label=f"sigma = {s:g} m")
                       for s, f in zip(data["shown_sigmas"], data["fields"])]).opts(
        title="Place fields from 5 grid modules", legend_position="right", responsive=True,
        min_height=300)


def plot_fwhm(data: dict, sigma: float | None = None) -> hv.Overlay:
    """F1 (right): FWHM against sigma; the current sigma marked when given."""
    xy = (data["sigma"], data["fwhm"])
    layers = [hv.Curve(xy, "sigma (m)", "FWHM (m)").opts(color="black"),
              hv.Scatter(xy, "sigma (m)", "FWHM (m)").opts(size=4, color="black")]
    layers += [hv.HLine(s / 2).opts(color="#cccccc", line_dash="dotted")
               for s in data.get("spacings", [])]
    layers += [] if sigma is None else [hv.VLine(sigma).opts(color="#d62728")]
    return hv.Overlay(layers).opts(title="Field width vs decay width (dotted: half grid "
                                   "spacings)", responsive=True, min_height=300)


def plot_tradeoff(data: dict, n_index: int | None = None) -> hv.Layout | hv.Overlay:
    """F2: test MSE (± SE) vs sigma (log), one panel per ell, one curve per n; sigma* dots."""
    sig, panels = data["sigma"], []
    ns = list(range(len(data["n_train"]))) if n_index is None else [n_index]
    for j, ell in enumerate(data["ell"]):
        layers = []
        for i in ns:
            m, se = data["mse"][:, i, j], data["se"][:, i, j]
            layers += [hv.Curve((sig, m), "sigma", "test MSE",
                                label=f"n = {int(data['n_train'][i])}"),
                       hv.Spread((sig, m, se), "sigma", ["test MSE", "SE"]).opts(alpha=0.2),
                       hv.Scatter(([data["sigma_star"][i, j]], [m.min()]), "sigma",
                                  "test MSE").opts(size=8, color="black", marker="x")]
        # one n: the title names it (a one-entry legend pushed the title 50 px off the frame)
        star = f"n = {int(data['n_train'][ns[0]])}, ell = {ell:g}: sigma* = " \
            f"{float(data['sigma_star'][ns[0], j]):.3f}"
        panels.append(hv.Overlay(layers).opts(
            title=f"ell = {ell:g}" if n_index is None else star, logx=True, logy=True,
            legend_position="top", show_legend=n_index is None, responsive=True,
            min_height=340))  # a frame tall enough for its log ticks
    return panels[0] if len(panels) == 1 else hv.Layout(panels).cols(2)


def kernel_overlay(delta, rope, curves, title: str, rope_opts: dict, **opts) -> hv.Overlay:
    """RoPE's kernel and ``curves`` = ``[(label, kernel, style)]`` against Delta."""
    layers = [hv.Curve((delta, k), DELTA, KERNEL, label=lab).opts(**st) for lab, k, st in
              [("RoPE", rope, rope_opts), *curves]]
    return hv.Overlay(layers).opts(title=title, legend_position="right", responsive=True, **opts)


def plot_hipe_kernels(data: dict, decays=pf.DECAYS, max_delta: float | None = None
                      ) -> hv.Overlay:
    """F3: K(Delta)/K(0) for RoPE and HIPE (each decay, the shown sigmas), for
    Delta <= ``max_delta`` (the data are cut, not hidden outside fixed axes)."""
    cut = slice(None if max_delta is None else int(max_delta) + 1)
    curves = [(f"{d}, sigma = {s:g}", np.asarray(data[d]["shown"][i])[cut],
               {"color": DECAY_COLORS[d], "line_dash": ("solid", "dashed", "dotted")[i % 3]})
              for d in decays for i, s in enumerate(data["shown_sigmas"])]
    return kernel_overlay(np.asarray(data["delta"])[cut], np.asarray(data["rope"])[cut], curves,
                          "HIPE turns RoPE's kernel into place fields",
                          {"color": "black", "line_width": 2}, min_height=320, logx=False)


def plot_head_kernels(data: dict, decay: str, log_delta: bool = True) -> hv.Overlay:
    """The app's F3 view: one HIPE kernel per head sigma (distinct colours) and RoPE (thin
    grey); a log distance axis (Delta >= 1) gives every width its own decade."""
    cut = slice(1 if log_delta else 0, None)
    curves = [(f"sigma_h = {s:g}", k[cut], {"color": c, "line_width": 2.5}) for s, k, c in
              zip(data["sigmas"], data["hipe"], itertools.cycle(HEAD_COLORS))]
    return kernel_overlay(data["delta"][cut], data["rope"][cut], curves,
                          f"Positional kernels ({decay} decay)",
                          {"color": "#999999", "line_width": 1}, logx=log_delta, min_height=300)


def efficiency_title(frame, claim=None) -> str:
    """F4's verdict in words, computed: from the claim's committed values when there are any
    for its current row, else from ``claim`` (or the claim measured on ``frame``'s seeds)."""
    est = estimates.estimates(pf.PAPER).get("hipe_data_efficiency")
    seeds = frame["seeds"].iloc[0]
    claim = claim or pf.efficiency_claim(frame, pf.LMConfig(), seeds[0])
    holds, where = (est.holds, f"the committed seeds ({est.text()})") if est else (
        claim.holds, f"seeds {seeds[0]}-{seeds[-1]} (worst slack {claim.measured:+.3f} nats, "
        "needs > 0)")
    return f"Toy LM (derived): gain {'' if holds else 'NOT '}reproduced over {where}"


def plot_data_efficiency(frame, title: str | None = None, diff: bool = True) -> hv.Overlay:
    """F4 (derived) vs adaptation sequences k (log): with ``diff`` the headline comparison,
    each HIPE's paired difference to RoPE ± SE over seeds (RoPE = the zero line; below it HIPE
    is better); else each variant's mean test loss ± SE."""
    kx, ky = "adaptation sequences k", "test loss - RoPE's (nats)" if diff else "test loss (nats)"
    m, se, ks = *(("diff_mean", "diff_se") if diff else ("mean", "se")), np.unique(frame["size"])
    layers = [hv.Curve((ks, 0 * ks), kx, ky, label="RoPE (reference)").opts(
        color=VARIANT_COLORS["rope"], line_width=2)] if diff else []
    for v in lm.VARIANTS[1:] if diff else lm.VARIANTS:
        sub = frame[frame.variant == v].sort_values("size")
        x, y, e = sub["size"].to_numpy(), sub[m].to_numpy(), np.nan_to_num(sub[se].to_numpy())
        layers += [hv.Curve((x, y), kx, ky, label=lm.VARIANT_LABELS[v]).opts(
            color=VARIANT_COLORS[v], line_width=2),
            hv.ErrorBars((x, y, e), kx, [ky, "SE"]).opts(color=VARIANT_COLORS[v])]
    default = "HIPE - RoPE after adaptation" if diff else "Toy LM: test loss after adaptation"
    return hv.Overlay(layers).opts(title=title or default, logx=True, min_height=300, xlabel=kx,
                                   ylabel=ky, legend_position="top_right", responsive=True)


# --------------------------------------------------------------------------- the explorer
GRID_PARAMS = ["sigma", "decay", "n_modules", "module_ratio", "lambda0", "phases_per_module",
               "env_length"]
REG_PARAMS = ["n_train", "ell", "noise", "ridge"]
HIPE_PARAMS = ["head_dim", "rope_base", "head_sigmas", "max_dist", "log_delta"]


class PlaceFieldsExplorer(ExplorerBase):
    """Sweep the grid->place model, the few-shot regression and HIPE's head sigmas."""

    sigma = param.Number(0.1, bounds=(0.0, 0.5), step=0.005, doc="Decay width sigma of the "
                         "grid->place weights (m): the dorsal-to-ventral index.")
    decay = param.Selector(default="gaussian", objects=list(pf.DECAYS), doc="Decay family "
                           "D(sigma, k) of weights with spatial frequency (also HIPE's decay).")
    n_modules = param.Integer(5, bounds=(2, 8), doc="Number of grid modules M.")
    module_ratio = param.Number(1.42, bounds=(1.2, 1.8), step=0.01, doc="Module spacing ratio r.")
    lambda0 = param.Number(0.3, bounds=(0.2, 0.6), step=0.01, doc="Smallest grid spacing (m).")
    phases_per_module = param.Integer(16, bounds=(4, 32), doc="Grid-cell phases per module.")
    env_length = param.Number(2.0, bounds=(1.0, 10.0), step=0.5, doc="Track / arena side (m).")
    dim = param.Selector(default="1D", objects=["1D", "2D"],
                         doc="1-D track or 2-D arena (3 grid orientations at 60 degrees).")
    n_train = param.Integer(20, bounds=(2, 200), doc="Few-shot regression's training samples n.")
    ell = param.Number(0.1, bounds=(0.01, 0.5), step=0.01, doc="Length-scale ell of the "
                       "Gaussian-process target (unit environment).")
    noise = param.Number(0.1, bounds=(0.0, 0.5), step=0.01, doc="Observation noise sd.")
    ridge = param.Number(1e-2, bounds=(1e-4, 1.0), step=1e-4, doc="Regression's ridge penalty.")
    WIDGETS = {"ridge": {"type": pn.widgets.FloatSlider, "step": 1e-4, "format": "0.0000"}}
    head_dim = param.Integer(64, bounds=(16, 128), step=2, doc="Attention head size d (even).")
    rope_base = param.Number(1e4, bounds=(1e2, 1e6), step=100, doc="RoPE base: omega_f = "
                             "base^(-2f/d).")
    # three heads by default (the spec's F3 curves): seven overlapping curves were a tangle;
    # any list, e.g. the spec's "2, 4, 8, 16, 32, 64", can be typed in
    head_sigmas = param.String("4, 16, 64", doc="HIPE sigma of each head (tokens), "
                               "comma-separated (e.g. 2, 4, 8, 16, 32, 64).")
    max_dist = param.Integer(512, bounds=(64, 4096), step=64, doc="Largest Delta shown.")
    log_delta = param.Boolean(True, doc="Log distance axis (Delta >= 1): each head's width "
                              "gets its own decade.")

    #: settings within every bound that the model still rejects
    INVALID_EXAMPLES = ({"head_sigmas": ""}, {"head_sigmas": "4, -2"},
                        {"head_sigmas": "four"}, {"head_dim": 33})

    def grid_config(self) -> pf.GridConfig:
        cfg = pf.GridConfig(n_modules=self.n_modules, lambda0=self.lambda0,
                            ratio=self.module_ratio, phases=self.phases_per_module,
                            env_length=self.env_length, decay=self.decay,
                            sigmas=FWHM_SIGMAS, dx=max(0.0025, self.env_length / 2000))
        return cfg.validate() or cfg

    def regression_config(self) -> pf.RegressionConfig:
        # a lighter version of F2 (6 trials, 100 centres, 64 test points, 14 sigmas) so a
        # slider move stays near 0.1 s even at n = 200; the notebook runs the full figure
        cfg = pf.RegressionConfig(ells=(float(self.ell),), n_train=(int(self.n_train),),
                                  noise=float(self.noise), ridge=float(self.ridge), trials=6,
                                  n_centres=100, n_test=64, n_fourier=128,
                                  sigmas=LIVE_SIGMAS)
        return cfg.validate() or cfg

    def config(self) -> pf.PlaceFieldsConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        sig = parse_sigmas(self.head_sigmas)
        hipe = pf.HipeConfig(head_dim=self.head_dim, base=self.rope_base,
                             max_dist=self.max_dist, sigmas=sig, shown_sigmas=sig)
        return hipe.validate() or pf.PlaceFieldsConfig(
            grid=self.grid_config(), regression=self.regression_config(), hipe=hipe)

    def _mse_data(self) -> dict:
        return _tradeoff(self.regression_config(), 0)

    def _kernel_data(self) -> dict:
        return _kernels(parse_sigmas(self.head_sigmas), int(self.head_dim),
                        float(self.rope_base), self.decay, int(self.max_dist))

    def plot_data(self) -> dict:
        """The numbers behind the views; a part whose settings are invalid is left out."""
        data: dict = {}
        for build, keys in (
                (lambda: _field(self.grid_config(), float(self.sigma), self.dim),
                 {"field": "field", "position": "x"}),
                (lambda: _fwhm_curve(self.grid_config()), {"fwhm_sigma": "sigma", "fwhm": "fwhm"}),
                (self._mse_data, {"mse_sigma": "sigma", "mse": "mse", "mse_se": "se",
                                  "sigma_star": "sigma_star"}),
                (self._kernel_data, {"delta": "delta", "hipe_kernels": "hipe",
                                     "rope_kernel": "rope"})):
            try:
                d = build()
            except ValueError:
                continue
            data.update({k: np.squeeze(d[v]) for k, v in keys.items()})  # one n, one ell
        if (frame := f4_frame()) is not None:
            data["f4"] = frame.drop(columns=["label", "seeds", "losses"]).fillna(0.0)
        return data

    def _valid_or_last(self, key: str, build: Callable[[], hv.Element]) -> hv.Element:
        """``build()``, or on invalid settings the last valid plot (the alert says why): a
        DynamicMap must keep one element type, so a message cannot replace an overlay."""
        last = self.__dict__.setdefault("_last_valid", {})
        try:
            last[key] = build()
        except ValueError as e:
            return last.get(key) or message_plot(str(e))
        return last[key]

    @param.depends(*GRID_PARAMS)
    def field_chart(self) -> Chart | None:
        """One cell's place field on the 1-D track (live: a slider step writes new numbers);
        ``None`` while the settings are invalid (the alert says why, the last field stays)."""
        try:
            field = _field(self.grid_config(), float(self.sigma), "1D")
        except ValueError:
            return None
        return Chart("Place field on the 1-D track", "position (m)", "normalised rate",
                     [Series("#1f77b4", field["x"], field["field"],
                             f"sigma = {self.sigma:g} m, FWHM = {field['fwhm']:.3f} m")])

    def live_charts(self) -> list:
        return [self.field_chart]

    @param.depends(*GRID_PARAMS, "dim")
    def arena_view(self) -> hv.Image:
        """The 2-D field (3 grid orientations at 60 degrees); shown when ``dim`` is 2D."""
        try:
            field = _field(self.grid_config(), float(self.sigma), "2D") if self.dim == "2D" \
                else {}
        except ValueError:
            field = {}
        x, z = field.get("x", np.array([0.0, 1.0])), field.get("field", np.zeros((2, 2)))
        return hv.Image((x, x, z), ["x (m)", "y (m)"], "rate").opts(
            cmap="viridis", colorbar=True, responsive=True, min_height=300,
            title=f"2-D place field, sigma = {self.sigma:g} m")

    @param.depends(*GRID_PARAMS[1:])
    def fwhm_view(self) -> hv.Overlay | hv.Element:
        """FWHM against sigma on the 1-D track (the field view gives the current sigma's)."""
        return self._valid_or_last("fwhm", lambda: plot_fwhm(_fwhm_curve(self.grid_config())))

    @param.depends(*REG_PARAMS)
    def mse_view(self) -> hv.Overlay | hv.Element:
        """Few-shot test MSE against sigma for the current n, ell, noise and ridge (F2)."""
        return self._valid_or_last("mse", lambda: plot_tradeoff(self._mse_data(), 0))

    @param.depends(*HIPE_PARAMS, "decay")
    def kernel_view(self) -> hv.Overlay | hv.Element:
        """HIPE kernel of every head sigma vs RoPE (F3)."""
        return self._valid_or_last("kernel", lambda: plot_head_kernels(
            self._kernel_data(), self.decay, self.log_delta))

    @param.depends()
    def efficiency_view(self) -> hv.Overlay | hv.Element:
        """F4's headline comparison (cache, else shipped seeds 0-4), verdict in the title."""
        frame = f4_frame()
        return message_plot("No F4 results cached: run the notebook") if frame is None else \
            plot_data_efficiency(frame, title=efficiency_title(frame))

    @param.depends("dim")
    def _arena_pane(self):
        """The 2-D view exists only in 2-D mode, so 1-D slider moves never update it."""
        return pn.pane.HoloViews(hv.DynamicMap(self.arena_view), sizing_mode="stretch_width") \
            if self.dim == "2D" else pn.Spacer(height=0)

    @param.depends(*GRID_PARAMS, *REG_PARAMS, *HIPE_PARAMS, watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    def control_column(self) -> pn.Column:
        """Three groups of settings (there is no Run)."""
        return pn.Column(
            pn.pane.Markdown("**Grid -> place cells**"), self.controls(GRID_PARAMS + ["dim"]),
            pn.pane.Markdown("**Few-shot regression**"), self.controls(REG_PARAMS),
            pn.pane.Markdown("**HIPE**"), self.controls(HIPE_PARAMS), width=320)

    def live_rows(self) -> list:
        """Every view is live: the Bokeh figures, then the HoloViews ones."""
        def view(method):
            return pn.pane.HoloViews(hv.DynamicMap(method), sizing_mode="stretch_width")

        return [pn.Row(*self.live_panes(), view(self.fwhm_view), sizing_mode="stretch_width"),
                pn.panel(self._arena_pane, sizing_mode="stretch_width"),
                pn.Row(view(self.mse_view), view(self.kernel_view), sizing_mode="stretch_width"),
                pn.panel(self.efficiency_view, sizing_mode="stretch_width")]


Explorer = PlaceFieldsExplorer
create_app = app_factory(Explorer, (
    "## The hippocampal place-field gradient and HIPE (place_fields)\n\n"
    "Zhou & Chen, *The Hippocampal Place Field Gradient: A Bio-inspired Framework Building "
    "Multiscale Representation for Better Sample Efficiency*, ICML 2026 ([arXiv 2506.04943]"
    "(https://arxiv.org/abs/2506.04943)). Field, FWHM, few-shot error and positional kernels "
    "update live; the toy-LM comparison (derived: pretrained, then adapted on k sequences "
    "of a shifted source) is read from the cache."))

if __name__.startswith("bokeh"):
    create_app().servable()
