"""Scales, cached training runs and the data of the figures (F1 scan, F2 ablations, F3 AP vs
anomaly size and distance).

One *replicate* ``s`` draws its own training scenes (training anomaly shapes), validation scenes
(training shapes, other scenes) and held-out test scenes (held-out shapes and sizes), casts
factual and counterfactual scans, and trains every variant on the same data with training seed
``s``.  Issue 47: each variant's loss weights are chosen from ``weight_grid`` by its own
validation AP (``candidates``; seg-only and range-only have none to choose).  A figure over
``n_seeds`` seeds uses replicates ``seed, seed + 1, ...``; each (config, replicate) is cached.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass

import torch

from icml26.common import cached, check_choice, check_int, device_key, generator, resolve_device
from icml26.common import config_for as _config_for
from icml26.coval.model import (
    ABLATIONS,
    TrainConfig,
    auroc,
    average_precision,
    encode,
    scores,
    train,
)
from icml26.coval.scene import (
    TEST_SHAPES,
    TRAIN_SHAPES,
    beam_dirs,
    cast_scans,
    cast_sweeps,
    make_scenes,
    sweep_poses,
)

PAPER = "coval"
CACHE_VERSION = 3  # 2: VVCR regresses the void depth; 3: on every beam, weights on validation
#: the range-only control plus the four ablations of the spec
VARIANTS = ("range only (seg-only)", *ABLATIONS)


@dataclass(frozen=True)
class COVALConfig:
    """A scale preset. Defaults (quick): calibrated on CPU to fit the claims budget."""

    n_beams: int = 256  # spec: 720 (paper scale); 256 keeps quick-scale training ~4 s a model
    max_range: float = 20.0  # m; rooms are 10-22 m across, the doorway beams return nothing
    n_bins: int = 32  # log-spaced free-space carving bins per beam
    n_sweeps: int = 5  # sweeps of the moving sensor (1: the first, single-scan design)
    sweep_step: float = 1.5  # m the sensor drives between sweeps (a path of 6 m)
    sweep_cells: str = "occluded"  # the other sweeps' channels on this sweep's void ("all")
    noise: float = 0.02  # m, Gaussian range noise on returns
    n_train: int = 1024  # training scenes per replicate
    n_test: int = 128  # held-out test scenes per replicate
    hidden: int = 16
    steps: int = 300
    batch: int = 16
    lr: float = 0.01
    #: issue 47: every loss weight a variant uses is chosen from this grid by that variant's
    #: validation AP (full COVAL: the 2 x 2 product); fixed in writing before any run
    weight_grid: tuple[float, ...] = (0.3, 3.0)
    n_val: int = 128  # validation scenes per replicate (training shapes, other scenes)
    w_vvcr: float = 1.0  # fixed loss weights, used only when weight_grid is () (the app's Run)
    w_vicc: float = 1.0
    vvcr_beams: str = "valid"  # L_VVCR on every beam with a return; "anomaly": issue 35's
    n_seeds: int = 3  # spec: AP by ablation over 3 seeds
    jitter: float = 0.0  # m; > 0 is the mutation (counterfactual from a moved sensor)
    vvcr_target: str = "counterfactual"  # "factual": the mutation (nothing to reconstruct)

    def __post_init__(self):
        check_int("n_beams", self.n_beams, 16, 4096)
        check_int("n_bins", self.n_bins, 1, 128)
        check_int("n_sweeps", self.n_sweeps, 1, 9)
        if self.n_sweeps > 1 and not 0 < self.sweep_step * (self.n_sweeps // 2) <= 4.0:
            raise ValueError(f"sweeps must stay within 4 m of the origin (inside the room), "
                             f"got n_sweeps {self.n_sweeps}, sweep_step {self.sweep_step}")
        check_int("n_train", self.n_train, 8)
        check_int("n_test", self.n_test, 4)
        check_int("hidden", self.hidden, 4, 256)
        check_int("steps", self.steps, 1)
        check_int("batch", self.batch, 1)
        check_int("n_seeds", self.n_seeds, 1, 10)
        check_choice("sweep_cells", self.sweep_cells, ("occluded", "all"))
        check_choice("vvcr_target", self.vvcr_target, ("counterfactual", "factual"))
        check_choice("vvcr_beams", self.vvcr_beams, ("valid", "anomaly"))
        check_int("n_val", self.n_val, 4)
        if any(not w > 0 for w in self.weight_grid):
            raise ValueError(f"weight_grid must hold weights > 0, got {self.weight_grid}")
        if not (self.max_range > 2 and self.noise >= 0 and self.jitter >= 0 and self.lr > 0):
            raise ValueError("need max_range > 2 m, noise >= 0, jitter >= 0 and lr > 0, got "
                             f"{self.max_range}, {self.noise}, {self.jitter}, {self.lr}")
        if self.w_vvcr < 0 or self.w_vicc < 0:
            raise ValueError(f"loss weights must be >= 0, got {self.w_vvcr}, {self.w_vicc}")

    def data_key(self) -> dict:
        key = {k: getattr(self, k) for k in ("n_beams", "max_range", "n_bins", "noise",
                                             "n_train", "n_test", "jitter")}
        if self.n_sweeps > 1:  # the single-sweep design keeps its first cache keys
            key.update(n_sweeps=self.n_sweeps, sweep_step=self.sweep_step,
                       sweep_cells=self.sweep_cells)
        return key

    def train_config(self, variant: str, w_vvcr: float | None = None,
                     w_vicc: float | None = None) -> TrainConfig:
        """The training config of ``variant`` with these weights (default: the fixed
        ``w_vvcr`` / ``w_vicc``); a loss the variant switches off gets weight 0."""
        check_choice("variant", variant, VARIANTS)
        vvcr, vicc = ABLATIONS.get(variant, (0.0, 0.0))
        w_vvcr = self.w_vvcr if w_vvcr is None else w_vvcr
        w_vicc = self.w_vicc if w_vicc is None else w_vicc
        return TrainConfig(w_vvcr=vvcr * w_vvcr, w_vicc=vicc * w_vicc,
                           visibility=variant != VARIANTS[0], hidden=self.hidden,
                           steps=self.steps, batch=self.batch, lr=self.lr,
                           vvcr_target=self.vvcr_target, vvcr_beams=self.vvcr_beams)

    def candidates(self, variant: str) -> list[TrainConfig]:
        """Every training config ``variant`` chooses from by validation AP: each loss weight
        it uses from ``weight_grid`` (full COVAL: the product, ``w_vvcr`` outer); one config
        when it uses none or the grid is empty (the fixed weights)."""
        vvcr, vicc = ABLATIONS.get(variant, (0.0, 0.0)) if variant in VARIANTS else (0, 0)
        grid = self.weight_grid
        if not grid or not (vvcr or vicc):
            return [self.train_config(variant)]
        return [self.train_config(variant, a, b)
                for a, b in itertools.product(grid if vvcr else (0.0,), grid if vicc else (0.0,))]


SCALES = {
    "quick": COVALConfig(),
    "paper": COVALConfig(n_beams=720, n_train=4096, n_test=512, n_val=512, hidden=32, steps=3000,
                         n_seeds=3),
}


def config_for(scale: str = "quick") -> COVALConfig:
    return _config_for(SCALES, scale)


def scan_data(cfg: COVALConfig, seed: int, split: str, device="cpu") -> dict:
    """Scenes, clean scans and network inputs of one split (``"train"`` | ``"val"`` |
    ``"test"``; validation: ``n_val`` other scenes with the training shapes); scenes are drawn
    with numpy and range noise on the CPU generator, the rays cast and the inputs built on
    ``device``."""
    check_choice("split", split, ("train", "val", "test"))
    dev = resolve_device(device)
    train_split = split != "test"  # validation scenes draw the training shapes
    if split == "val":
        n, scene_seed, noise_seed = cfg.n_val, 1_000_000 + int(seed), 30_000_000 + int(seed)
    else:
        n = cfg.n_train if train_split else cfg.n_test
        scene_seed = 2 * int(seed) + (not train_split)
        noise_seed = 10_000 + 2 * int(seed) + (0 if train_split else 1)
    poses = (sweep_poses(n, scene_seed, cfg.n_sweeps, cfg.sweep_step)
             if cfg.n_sweeps > 1 else None)
    scenes = make_scenes(n, scene_seed, TRAIN_SHAPES if train_split else TEST_SHAPES, poses)
    s = cast_scans(scenes, cfg.n_beams, cfg.max_range, jitter=cfg.jitter, device=dev)
    g = generator(noise_seed)
    cf_valid = s.counterfactual < cfg.max_range

    def noisy(r, valid):
        noise = torch.randn(r.shape, generator=g).to(r.device)
        return torch.where(valid, r + cfg.noise * noise, r)

    f_noisy = noisy(s.factual, s.valid)
    cf_noisy = noisy(s.counterfactual, cf_valid)
    gap = float((s.factual - s.counterfactual)[~s.shadow].abs().max())
    others_f = others_cf = None
    if cfg.n_sweeps > 1:  # the other sweeps of the moving sensor (second design)
        poses = poses[:, 1:]
        sw = cast_sweeps(scenes, poses, cfg.n_beams, cfg.max_range, cfg.jitter, device=dev)
        gap = max(gap, sw["exact_gap"])
        poses = poses.to(dev)
        ok_f, ok_cf = sw["factual"] < cfg.max_range, sw["counterfactual"] < cfg.max_range
        others_f = {"ranges": noisy(sw["factual"], ok_f), "valid": ok_f, "poses": poses}
        others_cf = {"ranges": noisy(sw["counterfactual"], ok_cf), "valid": ok_cf,
                     "poses": poses}
    return {"scenes": scenes, "scans": s, "ranges": f_noisy, "valid": s.valid,
            "label": s.label, "shadow": s.shadow,
            "x_f": encode(f_noisy, s.valid, cfg.max_range, cfg.n_bins, others=others_f,
                          sweep_cells=cfg.sweep_cells),
            "x_cf": encode(cf_noisy, cf_valid, cfg.max_range, cfg.n_bins, others=others_cf,
                           sweep_cells=cfg.sweep_cells),
            # VVCR targets: the depth of the occlusion void behind each beam, in log range
            # (0 wherever nothing is hidden); "rec_f" is the mutation's target (no void)
            "rec_cf": torch.log(s.counterfactual) - torch.log(s.factual),
            "rec_f": torch.zeros_like(s.factual),
            "exact_gap": gap}


def replicate(cfg: COVALConfig, seed: int, variants=VARIANTS, progress=None,
              device="cpu") -> dict:
    """Train/evaluate ``variants`` on replicate ``seed`` on ``device`` (cached per variant and
    device type; the returned tensors are on the CPU).

    Each variant trains every config of ``cfg.candidates(variant)`` and keeps the one of
    best validation AP (the first on ties); its test AP is never looked at in the choice.

    Returns ``{variant: {"ap", "auroc", "scores" [n_test, R], "w_vvcr", "w_vicc", "val_ap",
    "grid": [(w_vvcr, w_vicc, val_ap), ...]}, "test": {labels, valid, size, distance},
    "exact_gap": max |f - cf| outside the shadow over train and test scenes}``.
    """
    dev = resolve_device(device)
    data = {}

    def get(split):
        if split not in data:
            data[split] = scan_data(cfg, seed, split, dev)
        return data[split]

    def point_ap(net, split, tcfg):
        d = get(split)
        sc = scores(net, d["x_f"], tcfg.visibility).cpu()
        v, label = d["valid"].cpu(), d["label"].cpu()
        return sc, average_precision(sc[v], label[v]), auroc(sc[v], label[v])

    def run_one(variant, tcfg, choose):
        def compute():
            net = train(get("train"), tcfg, seed)
            sc, ap, roc = point_ap(net, "test", tcfg)
            val = point_ap(net, "val", tcfg)[1] if choose else math.nan
            return {"ap": ap, "auroc": roc, "scores": sc, "val_ap": val,
                    "w_vvcr": tcfg.w_vvcr, "w_vicc": tcfg.w_vicc}
        key = {**cfg.data_key(), **dataclasses.asdict(tcfg)}
        if choose:  # a validation AP is computed only where a weight is chosen
            key["n_val"] = cfg.n_val
        return cached(PAPER, device_key(f"run-{variant}", dev), key, seed, CACHE_VERSION,
                      compute)

    def run(variant):
        cands = cfg.candidates(variant)
        runs = [run_one(variant, t, len(cands) > 1) for t in cands]
        best = max(range(len(runs)), key=lambda i: (runs[i]["val_ap"], -i)) \
            if len(runs) > 1 else 0
        return {**runs[best], "grid": [(r["w_vvcr"], r["w_vicc"], r["val_ap"]) for r in runs]}

    out = {}
    for v in variants:
        if progress is not None:
            progress(f"replicate {seed}: {v}")
        out[v] = run(v)

    def meta():
        tr, te = get("train"), get("test")
        return {"label": te["label"].cpu(), "valid": te["valid"].cpu(),
                "size": te["scenes"].radius,
                "distance": te["scenes"].distance,
                "exact_gap": max(tr["exact_gap"], te["exact_gap"])}
    out["test"] = cached(PAPER, device_key("test-meta", dev), cfg.data_key(), seed,
                         CACHE_VERSION, meta)
    out["exact_gap"] = out["test"]["exact_gap"]
    return out


# --------------------------------------------------------------------------- figure data
def figure_scan_data(cfg: COVALConfig, seed: int = 0, index: int = 0,
                     held_out: bool = True, radius: float | None = None,
                     jag: float | None = None) -> dict:
    """F1: one scene's factual and counterfactual scans (cheap: a single scene).

    ``radius`` / ``jag`` override the anomaly's size and jaggedness (the dashboard sliders).
    Returns points ``(x, y)`` of both scans, the shadow beams, labels, the anomaly outline and
    the sensor's sweep positions (second design: the scene keeps their path clear).
    """
    shapes = TEST_SHAPES if held_out else TRAIN_SHAPES
    if radius is not None or jag is not None:
        shapes = dataclasses.replace(
            shapes, radius=(radius, radius) if radius is not None else shapes.radius,
            jag=(jag, jag) if jag is not None else shapes.jag)
    scene_seed = 7919 * int(seed) + 3
    poses = (sweep_poses(index + 1, scene_seed, cfg.n_sweeps, cfg.sweep_step)
             if cfg.n_sweeps > 1 else None)  # the path kept clear, as in the data
    scenes = make_scenes(index + 1, scene_seed, shapes, poses)
    one = dataclasses.replace(scenes, **{f.name: getattr(scenes, f.name)[index:index + 1]
                                         for f in dataclasses.fields(scenes)})
    s = cast_scans(one, cfg.n_beams, cfg.max_range, jitter=cfg.jitter)
    d = beam_dirs(cfg.n_beams)
    f, cf = s.factual[0], s.counterfactual[0]
    return {"dirs": d, "factual": f, "counterfactual": cf, "label": s.label[0],
            "valid": s.valid[0], "cf_valid": cf < cfg.max_range, "shadow": s.shadow[0],
            "anomaly": one.anomaly[0, :int(one.n_verts[0])], "radius": float(one.radius[0]),
            "distance": float(one.distance[0]),
            "gap_outside": float((f - cf)[~s.shadow[0]].abs().max()),
            "gap_inside": float((f - cf)[s.shadow[0]].abs().max()),
            # the sensor's sweep positions (the labelled sweep first, at the origin)
            "poses": (poses[index] if poses is not None else torch.zeros(1, 2))}


def figure_ablation_data(cfg: COVALConfig, seed: int = 0, progress=None) -> list[dict]:
    """F2: AP and AUROC of every variant on the held-out test set, replicates ``seed..``,
    with the loss weights each chose on validation (and that validation AP; NaN: no choice)."""
    rows = []
    for k in range(cfg.n_seeds):
        rep = replicate(cfg, seed + k, progress=progress)
        rows += [{"variant": v, "seed": seed + k, "ap": rep[v]["ap"], "auroc": rep[v]["auroc"],
                  "w_vvcr": rep[v]["w_vvcr"], "w_vicc": rep[v]["w_vicc"],
                  "val_ap": rep[v]["val_ap"], "exact_gap": rep["exact_gap"]} for v in VARIANTS]
    return rows


def _bins(values: torch.Tensor, n: int) -> list[tuple[float, float]]:
    q = torch.quantile(values.double(), torch.linspace(0, 1, n + 1, dtype=torch.float64))
    return list(zip(q[:-1].tolist(), q[1:].tolist()))


def figure_size_distance_data(cfg: COVALConfig, seed: int = 0, n_bins: int = 4,
                              variants=(VARIANTS[0], "seg-only", "full COVAL")) -> list[dict]:
    """F3: AP per quantile bin of anomaly radius and of distance, mean over replicates."""
    rows = []
    reps = [replicate(cfg, seed + k) for k in range(cfg.n_seeds)]
    for axis in ("size", "distance"):
        for v in variants:
            for b, (lo, hi) in enumerate(_bins(reps[0]["test"][axis], n_bins)):
                aps = []
                for rep in reps:
                    t = rep["test"]
                    sel = (t[axis] >= lo) & (t[axis] <= hi)
                    m = t["valid"][sel]
                    if m.any():
                        aps.append(average_precision(rep[v]["scores"][sel][m], t["label"][sel][m]))
                aps = [a for a in aps if not math.isnan(a)]
                rows.append({"axis": axis, "variant": v, "bin": b, "lo": lo, "hi": hi,
                             "mid": 0.5 * (lo + hi),
                             "ap": sum(aps) / len(aps) if aps else math.nan})
    return rows
