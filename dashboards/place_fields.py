"""Explorer for "The Hippocampal Place Field Gradient" (place_fields) and HIPE.

Live views (analytic, milliseconds): the place field of one cell for the current decay width
sigma and grid modules (1-D track or 2-D arena); FWHM against sigma; the few-shot test error
of place-cell ridge regression against sigma for the current n, ell, noise and ridge; HIPE's
positional kernels for a list of head sigmas against plain RoPE.  F4 (the toy-LM data
efficiency) is shown from the on-disk cache, or from the shipped seeds 0-4 results when the
cache is empty; retraining belongs in the notebook.

Serve alone with ``panel serve dashboards/place_fields.py`` or with every paper via
``icml26 serve``.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable

import holoviews as hv
import numpy as np
import panel as pn
import param
import torch

from icml26 import place_fields as pf
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, message_plot
from icml26.place_fields import lm

DECAY_COLORS = {"gaussian": "#1f77b4", "exp": "#ff7f0e", "power": "#2ca02c"}
VARIANT_COLORS = {"rope": "#7f7f7f", "hipe_single": "#ff7f0e", "hipe_multi": "#1f77b4"}
FWHM_SIGMAS = tuple(np.round(np.linspace(0.0, 0.5, 26), 4))  # the FWHM curve of the app
LIVE_SIGMAS = tuple(float(v) for v in np.round(np.geomspace(0.005, 0.3, 14), 6))


def parse_sigmas(text: str) -> tuple[float, ...]:
    """``"2, 4, 8"`` -> ``(2.0, 4.0, 8.0)``; ValueError naming what is expected."""
    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("head sigmas must be a comma-separated list of positive numbers, "
                         "got an empty list")
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise ValueError(f"head sigmas must be numbers separated by commas, got {text!r}") \
            from None
    if any(not math.isfinite(v) or v <= 0 for v in values):
        raise ValueError(f"head sigmas must be > 0 and finite, got {list(values)}")
    if len(values) > 16:
        raise ValueError(f"at most 16 head sigmas, got {len(values)}")
    return values


# --------------------------------------------------------------------------- cached compute
@functools.lru_cache(maxsize=64)
def _fwhm_curve(grid: pf.GridConfig) -> dict:
    return pf.figure_field_gradient_data(grid, shown=False)


@functools.lru_cache(maxsize=16)
def _modules(grid: pf.GridConfig) -> tuple:
    x = pf.track(grid)
    return x, pf.module_fields(grid, x)


@functools.lru_cache(maxsize=64)
def _field(grid: pf.GridConfig, sigma: float, dim: str) -> dict:
    if dim == "2D":
        return pf.place_field_2d(sigma, grid, n=61)
    x, modules = _modules(grid)
    return {"x": x.numpy(), "field": pf.place_field([sigma], grid, x, modules)[0].numpy()}


@functools.lru_cache(maxsize=64)
def _tradeoff(reg: pf.RegressionConfig, seed: int) -> dict:
    return pf.figure_tradeoff_data(reg, seed)


@functools.lru_cache(maxsize=64)
def _kernels(head_sigmas: tuple[float, ...], head_dim: int, base: float, decay: str,
             max_dist: int) -> dict:
    omega = pf.rope_frequencies(head_dim, base)
    gain = pf.hipe_gain(head_sigmas, head_dim, base, decay)
    k = pf.positional_kernel(gain, omega, max_dist)
    rope = pf.positional_kernel(torch.ones(1, omega.numel(), dtype=pf.DTYPE), omega, max_dist)
    return {"delta": np.arange(max_dist + 1), "hipe": (k / k[:, :1]).numpy(),
            "rope": (rope / rope[:, :1])[0].numpy(), "sigmas": np.asarray(head_sigmas),
            "half_width": pf.half_width(k).numpy()}


def f4_frame():
    """The F4 table for seeds 0-4 from the cache if every seed is there, else shipped."""
    return _f4_frame(os.environ.get("ICML26_CACHE", ""))


@functools.lru_cache(maxsize=4)
def _f4_frame(cache_dir: str):
    return lm.cached_or_shipped_frame()


# --------------------------------------------------------------------------- figure plots
def plot_field_gradient(data: dict) -> hv.Overlay:
    """F1 (left): min-max normalised fields along the track for several sigma."""
    curves = [hv.Curve((data["x"], f), "position (m)", "normalised rate",
                       label=f"sigma = {s:g} m")
              for s, f in zip(data["shown_sigmas"], data["fields"])]
    return hv.Overlay(curves).opts(title="Place fields from 5 grid modules",
                                   legend_position="right", responsive=True, min_height=300)


def plot_fwhm(data: dict, sigma: float | None = None) -> hv.Overlay:
    """F1 (right): FWHM against sigma; the current sigma marked when given."""
    curve = hv.Curve((data["sigma"], data["fwhm"]), "sigma (m)", "FWHM (m)").opts(
        color="black")
    pts = hv.Scatter((data["sigma"], data["fwhm"]), "sigma (m)", "FWHM (m)").opts(
        size=4, color="black")
    layers = [curve, pts]
    for s in data.get("spacings", []):
        layers.append(hv.HLine(s / 2).opts(color="#cccccc", line_dash="dotted"))
    if sigma is not None:
        layers.append(hv.VLine(sigma).opts(color="#d62728"))
    return hv.Overlay(layers).opts(
        title="Field width vs decay width (dotted: half grid spacings)", responsive=True,
        min_height=300)


def plot_tradeoff(data: dict, n_index: int | None = None) -> hv.Layout | hv.Overlay:
    """F2: test MSE (± SE) vs sigma (log), one panel per ell, one curve per n; sigma* dots."""
    sig = data["sigma"]
    panels = []
    ns = list(range(len(data["n_train"]))) if n_index is None else [n_index]
    for j, ell in enumerate(data["ell"]):
        layers = []
        for i in ns:
            n = int(data["n_train"][i])
            m, se = data["mse"][:, i, j], data["se"][:, i, j]
            layers += [hv.Curve((sig, m), "sigma", "test MSE", label=f"n = {n}"),
                       hv.Spread((sig, m, se), "sigma", ["test MSE", "SE"]).opts(alpha=0.2),
                       hv.Scatter(([data["sigma_star"][i, j]], [m.min()]), "sigma",
                                  "test MSE").opts(size=8, color="black", marker="x")]
        panels.append(hv.Overlay(layers).opts(
            title=f"ell = {ell:g}", logx=True, logy=True, legend_position="top",
            # one n: its title names it, and a one-entry legend between title and frame
            # only pushed the title 50 px off the frame
            show_legend=n_index is None,
            responsive=True, min_height=340))  # a frame tall enough for its log ticks
    if len(panels) == 1:
        return panels[0]
    return hv.Layout(panels).cols(2)


def plot_hipe_kernels(data: dict, decays=pf.DECAYS, max_delta: float | None = None
                      ) -> hv.Overlay:
    """F3: K(Delta)/K(0) for RoPE and HIPE (each decay, the shown sigmas), for
    Delta <= ``max_delta`` (the data are cut, not hidden outside fixed axes)."""
    delta = np.asarray(data["delta"])
    keep = delta <= max_delta if max_delta is not None else np.ones(len(delta), bool)
    delta = delta[keep]
    layers = [hv.Curve((delta, np.asarray(data["rope"])[keep]), "relative distance Delta",
                       "K(Delta)/K(0)", label="RoPE").opts(color="black", line_width=2)]
    dashes = ["solid", "dashed", "dotted", "dotdash"]
    for d in decays:
        for i, s in enumerate(data["shown_sigmas"]):
            layers.append(hv.Curve((delta, np.asarray(data[d]["shown"][i])[keep]),
                                   "relative distance Delta",
                                   "K(Delta)/K(0)", label=f"{d}, sigma = {s:g}").opts(
                color=DECAY_COLORS[d], line_dash=dashes[i % len(dashes)]))
    return hv.Overlay(layers).opts(title="HIPE turns RoPE's kernel into place fields",
                                   legend_position="right", responsive=True, min_height=320,
                                   logx=False)


def plot_head_kernels(data: dict, decay: str) -> hv.Overlay:
    """The app's F3 view: one HIPE kernel per head sigma plus RoPE."""
    delta = data["delta"]
    layers = [hv.Curve((delta, data["rope"]), "relative distance Delta", "K(Delta)/K(0)",
                       label="RoPE").opts(color="black")]
    for s, k in zip(data["sigmas"], data["hipe"]):
        layers.append(hv.Curve((delta, k), "relative distance Delta", "K(Delta)/K(0)",
                               label=f"sigma_h = {s:g}"))
    return hv.Overlay(layers).opts(title=f"Positional kernels ({decay} decay)",
                                   legend_position="right", responsive=True, min_height=300)


def plot_data_efficiency(frame, title: str = "Toy LM: validation loss vs training sequences"
                         ) -> hv.Overlay:
    """F4 (derived): mean validation loss ± SE over seeds per variant vs data size (log)."""
    layers = []
    for v in lm.VARIANTS:
        sub = frame[frame.variant == v].sort_values("size")
        x, y, e = sub["size"].to_numpy(), sub["mean"].to_numpy(), sub["se"].to_numpy()
        e = np.nan_to_num(e)
        color = VARIANT_COLORS[v]
        layers += [hv.Curve((x, y), "training sequences", "validation loss (nats)",
                            label=lm.VARIANT_LABELS[v]).opts(color=color),
                   hv.ErrorBars((x, y, e), "training sequences",
                                ["validation loss (nats)", "SE"]).opts(color=color)]
    return hv.Overlay(layers).opts(title=title, logx=True, legend_position="top_right",
                                   responsive=True, min_height=300)


# --------------------------------------------------------------------------- the explorer
class PlaceFieldsExplorer(ExplorerBase):
    """Sweep the grid->place model, the few-shot regression and HIPE's head sigmas."""

    sigma = param.Number(0.1, bounds=(0.0, 0.5), step=0.005,
                         doc="Decay width sigma of the grid->place weights (m): the "
                             "dorsal-to-ventral index.")
    decay = param.Selector(default="gaussian", objects=list(pf.DECAYS),
                           doc="Decay family D(sigma, k) of weights with spatial frequency "
                               "(also HIPE's decay).")
    n_modules = param.Integer(5, bounds=(2, 8), doc="Number of grid modules M.")
    module_ratio = param.Number(1.42, bounds=(1.2, 1.8), step=0.01,
                                doc="Spacing ratio r between successive modules.")
    lambda0 = param.Number(0.3, bounds=(0.2, 0.6), step=0.01,
                           doc="Smallest grid spacing lambda0 (m).")
    phases_per_module = param.Integer(16, bounds=(4, 32), doc="Grid-cell phases per module.")
    env_length = param.Number(2.0, bounds=(1.0, 10.0), step=0.5,
                              doc="Length of the track / side of the arena (m).")
    dim = param.Selector(default="1D", objects=["1D", "2D"],
                         doc="1-D track or 2-D arena (3 grid orientations at 60 degrees).")
    n_train = param.Integer(20, bounds=(2, 200), doc="Training samples n of the few-shot "
                                                     "regression.")
    ell = param.Number(0.1, bounds=(0.01, 0.5), step=0.01,
                       doc="Length-scale ell of the Gaussian-process target (unit "
                           "environment).")
    noise = param.Number(0.1, bounds=(0.0, 0.5), step=0.01, doc="Observation noise sd.")
    ridge = param.Number(1e-2, bounds=(1e-4, 1.0), softbounds=(1e-4, 1.0), step=1e-4,
                         doc="Ridge penalty of the regression.")
    WIDGETS = {"ridge": {"type": pn.widgets.FloatSlider, "step": 1e-4, "format": "0.0000"}}
    head_dim = param.Integer(64, bounds=(16, 128), step=2,
                             doc="Attention head size d (must be even).")
    rope_base = param.Number(1e4, bounds=(1e2, 1e6), step=100,
                             doc="RoPE base: frequencies omega_f = base^(-2f/d).")
    head_sigmas = param.String("2, 4, 8, 16, 32, 64",
                               doc="HIPE sigma of each head (tokens), comma-separated.")
    max_dist = param.Integer(512, bounds=(64, 4096), step=64,
                             doc="Largest relative distance Delta shown.")

    #: settings within every bound that the model still rejects
    INVALID_EXAMPLES = ({"head_sigmas": ""}, {"head_sigmas": "4, -2"},
                        {"head_sigmas": "four"}, {"head_dim": 33})

    def __init__(self, **params):
        self._last_valid: dict[str, hv.Element] = {}
        super().__init__(**params)

    # ------------------------------------------------------------------ model
    def grid_config(self) -> pf.GridConfig:
        cfg = pf.GridConfig(n_modules=self.n_modules, lambda0=self.lambda0,
                            ratio=self.module_ratio, phases=self.phases_per_module,
                            env_length=self.env_length, decay=self.decay,
                            sigmas=FWHM_SIGMAS, dx=max(0.0025, self.env_length / 2000))
        cfg.validate()
        return cfg

    def regression_config(self) -> pf.RegressionConfig:
        # a lighter version of F2 (6 trials, 100 centres, 64 test points, 14 sigmas) so a
        # slider move stays near 0.1 s even at n = 200; the notebook runs the full figure
        cfg = pf.RegressionConfig(ells=(float(self.ell),), n_train=(int(self.n_train),),
                                  noise=float(self.noise), ridge=float(self.ridge), trials=6,
                                  n_centres=100, n_test=64, n_fourier=128,
                                  sigmas=LIVE_SIGMAS)
        cfg.validate()
        return cfg

    def hipe_sigmas(self) -> tuple[float, ...]:
        return parse_sigmas(self.head_sigmas)

    def config(self) -> pf.PlaceFieldsConfig:
        """The lib config for the current parameters (raises ValueError when invalid)."""
        sig = self.hipe_sigmas()
        hipe = pf.HipeConfig(head_dim=self.head_dim, base=self.rope_base,
                             max_dist=self.max_dist, sigmas=sig, shown_sigmas=sig)
        hipe.validate()
        return pf.PlaceFieldsConfig(grid=self.grid_config(),
                                    regression=self.regression_config(), hipe=hipe)

    def _grid_data(self) -> tuple[dict, dict]:
        grid = self.grid_config()
        return _field(grid, float(self.sigma), self.dim), _fwhm_curve(grid)

    def _mse_data(self) -> dict:
        return _tradeoff(self.regression_config(), 0)

    def _kernel_data(self) -> dict:
        return _kernels(self.hipe_sigmas(), int(self.head_dim), float(self.rope_base),
                        self.decay, int(self.max_dist))

    def plot_data(self) -> dict:
        """The numbers behind the views; a part whose settings are invalid is left out."""
        data: dict = {}
        try:
            field, curve = self._grid_data()
            data.update(field=field["field"], position=field["x"], fwhm_sigma=curve["sigma"],
                        fwhm=curve["fwhm"])
        except ValueError:
            pass
        try:
            mse = self._mse_data()
            data.update(mse_sigma=mse["sigma"], mse=mse["mse"][:, 0, 0],
                        mse_se=mse["se"][:, 0, 0], sigma_star=mse["sigma_star"][0, 0])
        except ValueError:
            pass
        try:
            k = self._kernel_data()
            data.update(delta=k["delta"], hipe_kernels=k["hipe"], rope_kernel=k["rope"])
        except ValueError:
            pass
        frame = f4_frame()
        if frame is not None:
            data["f4"] = frame[["size", "mean", "se"]].fillna(0.0)
        return data

    # ------------------------------------------------------------------ views
    def _valid_or_last(self, key: str, build: Callable[[], hv.Element]) -> hv.Element:
        """``build()``, or on invalid settings the last valid plot (the alert says why): a
        DynamicMap must keep one element type, so a message cannot replace an overlay."""
        try:
            out = build()
        except ValueError as e:
            return self._last_valid.get(key) or message_plot(str(e))
        self._last_valid[key] = out
        return out

    @param.depends("sigma", "decay", "n_modules", "module_ratio", "lambda0",
                   "phases_per_module", "env_length")
    def field_chart(self) -> Chart | None:
        """The place field of one cell along the 1-D track at the current sigma (a live
        figure: a slider step writes new numbers, HoloViews is not re-run); ``None`` while
        the settings are invalid (the alert says why, the last valid field stays)."""
        try:
            grid = self.grid_config()
            field = _field(grid, float(self.sigma), "1D")
        except ValueError:
            return None
        width = float(pf.fwhm(torch.as_tensor(field["field"])[None],
                              torch.as_tensor(field["x"]), grid.centre)[0])
        return Chart("Place field on the 1-D track", "position (m)", "normalised rate",
                     [Series("#1f77b4", field["x"], field["field"],
                             f"sigma = {self.sigma:g} m, FWHM = {width:.3f} m")])

    def live_charts(self) -> list:
        return [self.field_chart]

    @param.depends("sigma", "decay", "n_modules", "module_ratio", "lambda0",
                   "phases_per_module", "env_length", "dim")
    def arena_view(self) -> hv.Image:
        """The 2-D field (3 grid orientations at 60 degrees); shown when ``dim`` is 2D."""
        try:
            if self.dim != "2D":
                raise ValueError("1-D track selected")
            field = _field(self.grid_config(), float(self.sigma), "2D")
            x, z = field["x"], field["field"]
        except ValueError:
            x, z = np.array([0.0, 1.0]), np.zeros((2, 2))
        return hv.Image((x, x, z), ["x (m)", "y (m)"], "rate").opts(
            cmap="viridis", colorbar=True, responsive=True, min_height=300,
            title=f"2-D place field, sigma = {self.sigma:g} m")

    @param.depends("decay", "n_modules", "module_ratio", "lambda0", "phases_per_module",
                   "env_length")
    def fwhm_view(self) -> hv.Overlay | hv.Element:
        """FWHM against sigma on the 1-D track (the field view gives the current sigma's)."""
        return self._valid_or_last("fwhm", lambda: plot_fwhm(_fwhm_curve(self.grid_config())))

    @param.depends("n_train", "ell", "noise", "ridge")
    def mse_view(self) -> hv.Overlay | hv.Element:
        """Few-shot test MSE against sigma for the current n, ell, noise and ridge (F2)."""
        def build() -> hv.Overlay:
            data = self._mse_data()
            star = float(data["sigma_star"][0, 0])
            return plot_tradeoff(data, 0).opts(
                title=f"n = {self.n_train}, ell = {self.ell:g}: sigma* = {star:.3f}")

        return self._valid_or_last("mse", build)

    @param.depends("head_dim", "rope_base", "head_sigmas", "decay", "max_dist")
    def kernel_view(self) -> hv.Overlay | hv.Element:
        """HIPE kernel of every head sigma vs RoPE (F3)."""
        return self._valid_or_last(
            "kernel", lambda: plot_head_kernels(self._kernel_data(), self.decay))

    @param.depends()
    def efficiency_view(self) -> hv.Overlay | hv.Element:
        """F4 from the cache (or the shipped seeds 0-4 results); never retrains."""
        frame = f4_frame()
        if frame is None:
            return message_plot("No F4 results cached: run the notebook")
        seeds = frame["seeds"].iloc[0]
        return plot_data_efficiency(frame, title=f"Toy LM (derived), seeds "
                                    f"{seeds[0]}-{seeds[-1]}, mean ± SE")

    @param.depends("dim")
    def _arena_pane(self):
        """The 2-D view exists only in 2-D mode, so 1-D slider moves never update it."""
        if self.dim != "2D":
            return pn.Spacer(height=0)
        return pn.pane.HoloViews(hv.DynamicMap(self.arena_view), sizing_mode="stretch_width")

    @param.depends("head_sigmas", "head_dim", "rope_base", "max_dist", "decay", "sigma",
                   "n_modules", "module_ratio", "lambda0", "phases_per_module", "env_length",
                   "n_train", "ell", "noise", "ridge", watch=True, on_init=True)
    def _update_alert(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ layout
    def control_column(self) -> pn.Column:
        """Three groups of settings (there is no Run)."""
        grid_params = ["sigma", "decay", "n_modules", "module_ratio", "lambda0",
                       "phases_per_module", "env_length", "dim"]
        reg_params = ["n_train", "ell", "noise", "ridge"]
        hipe_params = ["head_dim", "rope_base", "head_sigmas", "max_dist"]
        return pn.Column(
            pn.pane.Markdown("**Grid -> place cells**"), self.controls(grid_params),
            pn.pane.Markdown("**Few-shot regression**"), self.controls(reg_params),
            pn.pane.Markdown("**HIPE**"), self.controls(hipe_params), width=320)

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
    "Zhou & Chen, *The Hippocampal Place Field Gradient: A Bio-inspired Framework "
    "Building Multiscale Representation for Better Sample Efficiency*, ICML 2026 "
    "([arXiv 2506.04943](https://arxiv.org/abs/2506.04943)). Field, FWHM, few-shot "
    "error and positional kernels update live; the toy-LM comparison (derived) is "
    "read from the cache."))

if __name__.startswith("bokeh"):
    create_app().servable()
