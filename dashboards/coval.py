"""Explorer for "COVAL: Counterfactual Occlusion-Visibility Anomaly Learning for LiDAR" (coval).

Live views (one scene ray-cast per step, a few ms): the factual and counterfactual scans of a
2-D LiDAR scene seen from above (the anomaly's returns, and the background that reappears in
its shadow when the anomaly is made non-occluding), and the same scans as range against beam
bearing with the shadow marked.  Behind the Run button (with progress): train the
segmentation-only model and COVAL with the chosen loss weights on one replicate and compare
their point-level AP on held-out anomalies, by anomaly size.  (The claims choose the weights on
a validation split, issue 47; the Run trains the weights set here, with no validation.)
The module also holds the plot functions the notebook uses for F1-F3.

The method is derived from the abstract (no paper text or code was found).
Serve alone with ``panel serve dashboards/coval.py`` or with every paper via ``icml26 serve``.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np
import param

from icml26 import coval
from icml26.dashboards.app import Chart, ExplorerBase, Series, app_factory, run_chart

COLORS = {"range only (seg-only)": "#7f7f7f", "seg-only": "#d62728", "+VVCR": "#ff7f0e",
          "+VICC": "#2ca02c", "full COVAL": "#1f77b4"}
SCAN_COLORS = {"factual": "#444444", "anomaly": "#d62728", "reappears": "#1f77b4"}
#: legend names (the range-only control's variant name is long for a legend)
SHORT = {"range only (seg-only)": "range only", "full COVAL": "full"}


# --------------------------------------------------------------------------- plot functions
def _xy(data: dict, ranges, mask) -> tuple[np.ndarray, np.ndarray]:
    d = data["dirs"].numpy()
    r = ranges.numpy()
    m = mask.numpy()
    return d[m, 0] * r[m], d[m, 1] * r[m]


def scan_chart(data: dict, title: str | None = None) -> Chart:
    """F1 (top view): factual returns, the anomaly's returns, and the counterfactual returns
    that reappear inside the shadow; the anomaly's outline; the sensor of the labelled sweep
    and the positions of the other sweeps."""
    shadow_cf = data["shadow"] & data["cf_valid"] & (data["counterfactual"] != data["factual"])
    normal = data["valid"] & ~data["label"]
    poly = np.vstack([data["anomaly"].numpy(), data["anomaly"][:1].numpy()])
    poses = data["poses"].numpy()
    # short: an equal-aspect frame is narrow, and a longer title was clipped at its edge
    return Chart(title or (f"Scene (r = {data['radius']:.2f} m at {data['distance']:.1f} m)"),
                 "x (m)", "y (m)", [
        Series(SCAN_COLORS["factual"], *_xy(data, data["factual"], normal), "factual",
               kind="scatter"),
        Series(SCAN_COLORS["anomaly"], *_xy(data, data["factual"], data["label"]),
               "anomaly", kind="scatter"),
        Series(SCAN_COLORS["reappears"], *_xy(data, data["counterfactual"], shadow_cf),
               "reappears in cf", kind="scatter"),
        Series(SCAN_COLORS["anomaly"], poly[:, 0], poly[:, 1], "outline", width=1),
        *([Series("#ff7f0e", poses[1:, 0], poses[1:, 1], "other sweeps' sensor",
                  kind="scatter")] if len(poses) > 1 else []),
        Series("black", [0.0], [0.0], "sensor", kind="scatter")], height=420, geometry=True)


def range_chart(data: dict) -> Chart:
    """F1 (range profile): factual and counterfactual range against beam bearing; the two
    differ only between the dashed marks (the anomaly's angular shadow)."""
    d = data["dirs"].numpy()
    deg = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 360
    order = np.argsort(deg)
    v = data["anomaly"].double().numpy()
    mid = math.atan2(v[:, 1].mean(), v[:, 0].mean())
    rel = (np.arctan2(v[:, 1], v[:, 0]) - mid + math.pi) % (2 * math.pi) - math.pi
    lo, hi = (np.degrees(mid + rel.min()) % 360, np.degrees(mid + rel.max()) % 360)
    return Chart(f"Range per beam: |f - cf| outside the shadow = {data['gap_outside']:.3g} m, "
                 f"inside up to {data['gap_inside']:.3g} m", "beam bearing (deg)", "range (m)", [
        Series(SCAN_COLORS["reappears"], deg[order], data["counterfactual"].numpy()[order],
               "counterfactual"),
        Series(SCAN_COLORS["factual"], deg[order], data["factual"].numpy()[order], "factual",
               dash="dashed"),
        Series(SCAN_COLORS["anomaly"], kind="vline", at=float(lo), dash="dotted", width=1),
        Series(SCAN_COLORS["anomaly"], kind="vline", at=float(hi), dash="dotted", width=1)],
        height=420)


def ablation_chart(rows: list[dict], metric: str = "ap") -> Chart:
    """F2: AP (or AUROC) per variant and seed (points) and the mean over seeds (line)."""
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    series = []
    for i, v in enumerate(variants):
        vals = [r[metric] for r in rows if r["variant"] == v]
        series.append(Series(COLORS.get(v, "black"), [i] * len(vals), vals, SHORT.get(v, v),
                             kind="scatter"))
    means = [float(np.mean([r[metric] for r in rows if r["variant"] == v])) for v in variants]
    series.append(Series("black", list(range(len(variants))), means, "mean", dash="dotted",
                         width=1))
    name = {"ap": "point AP", "auroc": "point AUROC"}[metric]
    return Chart(f"Held-out {name} by variant", "variant: " + ", ".join(
        f"{i} {SHORT.get(v, v)}" for i, v in enumerate(variants)), name, series)


def size_distance_chart(rows: list[dict], axis: str = "size") -> Chart:
    """F3: AP per quantile bin of anomaly radius (or distance), one curve per variant."""
    series = []
    for v in dict.fromkeys(r["variant"] for r in rows):
        pts = sorted((r["mid"], r["ap"]) for r in rows if r["axis"] == axis and r["variant"] == v)
        x, y = zip(*pts) if pts else ((), ())
        series += [Series(COLORS.get(v, "black"), x, y, SHORT.get(v, v)),
                   Series(COLORS.get(v, "black"), x, y, kind="scatter")]
    xl = {"size": "anomaly radius (m)", "distance": "anomaly distance (m)"}[axis]
    return Chart(f"AP against anomaly {axis} (held-out shapes)", xl, "point AP", series)


# --------------------------------------------------------------------------- explorer
@functools.lru_cache(maxsize=64)
def _scan(n_beams: int, radius: float, jag: float, jitter: float, index: int, seed: int):
    cfg = dataclasses.replace(coval.config_for("quick"), n_beams=n_beams, jitter=jitter)
    return coval.figure_scan_data(cfg, seed, index, radius=radius, jag=jag)


LIVE_CAPTION = (
    "*Left:* one held-out scene from above: grey the factual returns (walls with a doorway, "
    "boxes, poles), red the anomaly's returns and outline, blue the background the "
    "counterfactual scan sees once the anomaly is made non-occluding; black the sensor of the "
    "labelled sweep, orange where it scans the other four sweeps from (second design, issue "
    "35: the network also sees which occluded cells those sweeps saw free). *Right:* range "
    "per beam of the labelled sweep; "
    "the scans differ only between the dotted marks (the anomaly's angular shadow) unless the "
    "counterfactual sensor is moved (sensor pose offset). The method is derived from the "
    "abstract.")


class COVALExplorer(ExplorerBase):
    """Move the anomaly's size and shape, the beams and the sensor; Run trains the models."""

    INVALID_EXAMPLES = [{"w_vvcr": 0.0, "w_vicc": 0.0}]
    RUN_LABEL, LIVE_CAPTION = "Run training", LIVE_CAPTION

    radius = param.Number(0.6, bounds=(0.15, 1.5), step=0.05,
                          doc="Anomaly radius (m): training anomalies span 0.4-0.8 m, held-out "
                              "ones 0.3-1.0 m.")
    jag = param.Number(0.6, bounds=(0.0, 0.9), step=0.05,
                       doc="Anomaly jaggedness: vertex radii shrink by up to this fraction "
                           "(0 = a regular polygon).")
    n_beams = param.Integer(256, bounds=(32, 1440), step=32,
                            doc="Beams per scan (the spec's LiDAR has 720; quick scale 256).")
    jitter = param.Number(0.0, bounds=(0.0, 0.5), step=0.01,
                          doc="Sensor pose offset (m) of the counterfactual cast: > 0 breaks "
                              "identical geometry (the mutation), so scans differ outside the "
                              "shadow too.")
    scene = param.Integer(0, bounds=(0, 31), doc="Which scene of the seed's held-out set.")
    noise = param.Number(0.02, bounds=(0.0, 0.2), step=0.01,
                         doc="Gaussian range noise (m) on returns (Run).")
    w_vvcr = param.Number(1.0, bounds=(0.0, 5.0), step=0.1,
                          doc="Weight of L_VVCR, the occlusion void's depth regressed on every "
                              "beam (Run; the claims choose it on a validation split).")
    w_vicc = param.Number(1.0, bounds=(0.0, 5.0), step=0.1,
                          doc="Weight of L_VICC, feature consistency on co-visible beams (Run).")
    steps = param.Integer(150, bounds=(20, 1000), step=10,
                          doc="Training steps of each model in Run (the claims use 300).")
    n_train = param.Integer(512, bounds=(64, 2048), step=64,
                            doc="Training scenes in Run (the claims use 1024).")
    seed = param.Integer(0, bounds=(0, 10_000), doc="Seed of the scenes and of training.")
    run = param.Event(doc="Train seg-only and COVAL (these weights) and compare held-out AP.")

    # ------------------------------------------------------------------ model
    def config(self) -> coval.COVALConfig:
        """The lib config of a Run (raises ValueError when invalid)."""
        if self.w_vvcr == 0 and self.w_vicc == 0:
            raise ValueError("both loss weights are 0: COVAL would be the seg-only model; "
                             "set w_vvcr or w_vicc above 0")
        return dataclasses.replace(coval.config_for("quick"), n_beams=self.n_beams,
                                   noise=self.noise, w_vvcr=self.w_vvcr, w_vicc=self.w_vicc,
                                   steps=self.steps, n_train=self.n_train, n_test=64,
                                   n_seeds=1, jitter=self.jitter,
                                   weight_grid=())  # these weights, no validation choice

    def scan(self) -> dict:
        return _scan(self.n_beams, round(self.radius, 4), round(self.jag, 4),
                     round(self.jitter, 4), self.scene, self.seed)

    @param.depends("w_vvcr", "w_vicc", watch=True, on_init=True)
    def _check(self) -> None:
        self._show_error()

    # ------------------------------------------------------------------ live views
    @param.depends("radius", "jag", "n_beams", "jitter", "scene", "seed")
    def top_chart(self) -> Chart:
        """Top view of the factual and counterfactual scans of one scene."""
        return scan_chart(self.scan())

    @param.depends("radius", "jag", "n_beams", "jitter", "scene", "seed")
    def profile_chart(self) -> Chart:
        """Range against bearing, factual and counterfactual, with the shadow's edges."""
        return range_chart(self.scan())

    def live_charts(self) -> list:
        return [self.top_chart, self.profile_chart]

    # ------------------------------------------------------------------ the Run
    @run_chart
    def size_chart(self) -> Chart | None:
        """Held-out AP by anomaly size, seg-only vs COVAL (after Run)."""
        return size_distance_chart(self._result["rows"], "size")

    @run_chart
    def distance_chart(self) -> Chart | None:
        """Held-out AP by anomaly distance, seg-only vs COVAL (after Run)."""
        return size_distance_chart(self._result["rows"], "distance")

    def run_charts(self) -> list:
        return [self.size_chart, self.distance_chart]

    def plot_data(self) -> dict:
        data = super().plot_data()
        if self._result is not None:
            data["run"] = [(r["variant"], r["axis"], r["mid"], r["ap"])
                           for r in self._result["rows"]]
        return data

    def result_note(self) -> str:
        if self._result is None:
            return ("**Training:** press **Run** to train the segmentation-only model and "
                    "COVAL (these loss weights) on one replicate and compare their point AP on "
                    "held-out anomalies (its cost: under the Run button).")
        return f"**Held-out point AP:** {self._result['title']}."

    def start_run(self, cfg) -> None:
        """The Run (the button, with the settings' config)."""
        seed = self.seed
        variants = ("seg-only", "full COVAL")

        def train_one(v):
            return coval.replicate(cfg, seed, (v,))

        def keep(results):
            rows = coval.figure_size_distance_data(cfg, seed, n_bins=3, variants=variants)
            seg, full = results[0]["seg-only"], results[1]["full COVAL"]
            self._result = {"rows": rows, "title": (
                f"seg-only {seg['ap']:.3f} (AUROC {seg['auroc']:.3f}), COVAL "
                f"{full['ap']:.3f} (AUROC {full['auroc']:.3f}); w_vvcr {cfg.w_vvcr:g}, "
                f"w_vicc {cfg.w_vicc:g}, {cfg.steps} steps, {cfg.n_train} training scenes, "
                f"{cfg.n_beams} beams, noise {cfg.noise:g} m, seed {seed}")}

        self.run_stages([
            (f"seg-only: cast {cfg.n_train} scenes, train {cfg.steps} steps",
             lambda: train_one("seg-only")),
            (f"COVAL (w_vvcr {cfg.w_vvcr:g}, w_vicc {cfg.w_vicc:g}): train {cfg.steps} steps",
             lambda: train_one("full COVAL")),
        ], keep)


Explorer = COVALExplorer
create_app = app_factory(Explorer, (
    "## COVAL: counterfactual occlusion-visibility anomaly learning (coval)\n\n"
    "*COVAL: Counterfactual Occlusion-Visibility Anomaly Learning for LiDAR*, ICML 2026 "
    "(no arXiv id or code found; **the method here is derived from the abstract**). "
    "Live: a 2-D LiDAR scene's factual and counterfactual scans; **Run** trains the "
    "segmentation-only model and COVAL and compares held-out AP."))

if __name__.startswith("bokeh"):
    create_app().servable()
