"""Scales, cached training of the four models, linear probes and the data of every figure.

Probes: for each model, each block's output is mean-pooled over the 16 tokens of an image
noised at a probe setting (all tokens at ``tau = 0.3``, all at ``0.6``, or the harder one:
``tau = 0.6`` with half of the tokens at full noise), a standardized multinomial logistic
regression of the digit class is fitted on the training split and scored on the held-out
split.  The probe noise is the same for every model (a paired comparison).  Raw noisy
pixels through the same probe are the reference line.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from icml26.common import cached, device_key, in_cache, resolve_device
from icml26.common import config_for as _config_for
from icml26.selfflow.model import (
    N_TOKENS,
    DiTConfig,
    load_digits,
    noised,
    sample,
    split_indices,
    unpatchify,
)
from icml26.selfflow.training import (
    VARIANTS,
    TrainConfig,
    heldout_fm_loss,
    load_model,
    train,
    views,
)

PAPER = "selfflow"
CACHE_VERSION = 1
#: probe settings: (name, tau, fraction of tokens at full noise)
PROBES = (("tau 0.3", 0.3, 0.0), ("tau 0.6", 0.6, 0.0), ("tau 0.6, half masked", 0.6, 0.5))


@dataclass(frozen=True)
class SelfFlowConfig:
    """The experiment: the training run shared by the four models, the split and probes."""

    train: TrainConfig = TrainConfig()
    n_test: int = 397  # sklearn digits: 1400 train / 397 test, as in the spec's prototype
    probe_c: float = 0.5  # inverse L2 strength of the logistic probe on standardized features
    sample_n: int = 16
    sample_steps: int = 20
    fm_draws: int = 8

    def validate(self) -> None:
        self.train.validate()
        if not 50 <= self.n_test <= 1000:
            raise ValueError(f"n_test must be in [50, 1000], got {self.n_test}")


SCALES = {
    # ~20-30 s CPU per model; the spec's prototype size (d=48, 4 layers,
    # batch 64, student block 1 -> teacher block 3, EMA 0.99)
    "quick": SelfFlowConfig(TrainConfig(model=DiTConfig(dim=48, depth=4, heads=4), steps=600,
                                        batch=64)),
    # the spec's notebook design (d=128, 6 layers, student 2 -> teacher 5, EMA 0.999, ~3k
    # steps): a GPU or a patient user
    "paper": SelfFlowConfig(TrainConfig(model=DiTConfig(dim=128, depth=6, heads=4),
                                        steps=3000, batch=256, lr=1e-3, student_layer=2,
                                        teacher_layer=5, ema=0.999)),
}


def config_for(scale: str) -> SelfFlowConfig:
    return _config_for(SCALES, scale)


def with_train(cfg: SelfFlowConfig, **changes) -> SelfFlowConfig:
    """``cfg`` with fields of its training config replaced (mutations, the dashboard)."""
    return dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, **changes))


def data(cfg: SelfFlowConfig, seed: int) -> dict:
    """Tokens, labels and the seeded train/test split."""
    x, y = load_digits()
    tr, te = split_indices(len(x), cfg.n_test, seed)
    return {"x_train": x[tr], "y_train": y[tr], "x_test": x[te], "y_test": y[te]}


#: training fields a variant ignores (its run is identical whatever their values)
IGNORED = {"vanilla": ("mask_ratio", "mask_noise", "gamma", "student_layer", "teacher_layer",
                       "ema", "teacher_view", "timesteps"),
           "same_t": ("mask_ratio", "mask_noise", "teacher_view", "timesteps")}


def relevant(cfg: SelfFlowConfig, variant: str) -> SelfFlowConfig:
    """``cfg`` with the fields ``variant`` ignores at their defaults: the cache key, so a
    Self-Flow setting (or a mutation) never retrains the baselines."""
    default, top = TrainConfig(), cfg.train.model.depth - 1
    canon = {f: getattr(default, f) for f in IGNORED.get(variant, ())}
    for f in ("student_layer", "teacher_layer"):  # defaults, clipped to a shallower model
        if f in canon:
            canon[f] = min(canon[f], top)
    return with_train(cfg, **canon)


def trained(cfg: SelfFlowConfig, variant: str, seed: int, progress=None,
            device: str = "cpu") -> dict:
    """The trained ``variant`` (state dict + loss curve), cached per config, seed and device
    type (a CUDA model never overwrites the CPU one; the CPU key is unchanged)."""
    cfg = relevant(cfg, variant)
    d = data(cfg, seed)
    return cached(PAPER, device_key(f"model-{variant}", device), cfg.train, seed,
                  CACHE_VERSION,
                  lambda: train(variant, d["x_train"], cfg.train, seed, progress, device))


def probe_inputs(x: torch.Tensor, tau: float, masked: float, seed: int) -> tuple:
    """Noised probe inputs ``(x_tau [N, T, 4], tau [N, T])``, seeded by ``seed`` only (on
    the CPU)."""
    g = torch.Generator().manual_seed(20_000 + seed)
    eps = torch.randn(x.shape, generator=g)
    taus = torch.full(x.shape[:2], tau)
    if masked > 0:
        k = round(masked * N_TOKENS)
        order = torch.rand(x.shape[:2], generator=g).argsort(dim=1)
        taus = torch.where(order < k, torch.ones_like(taus), taus)
    return noised(x, eps, taus), taus


def probe_accuracy(f_train: np.ndarray, y_train, f_test: np.ndarray, y_test, c: float) -> float:
    """Standardized multinomial logistic regression: held-out accuracy."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(f_train)
    clf = LogisticRegression(C=c, max_iter=300).fit(sc.transform(f_train), np.asarray(y_train))
    return float(clf.score(sc.transform(f_test), np.asarray(y_test)))


def pooled_features(model, x: torch.Tensor, tau: float, masked: float, seed: int,
                    impl_batch: int = 512) -> np.ndarray:
    """Mean-pooled block outputs ``[depth, N, dim]`` at a probe setting (inputs drawn on the
    CPU, the forward pass where ``model`` is: on CUDA through the Triton ``ln_modulate``)."""
    xt, taus = probe_inputs(x, tau, masked, seed)
    dev = next(model.parameters()).device
    xt, taus = xt.to(dev), taus.to(dev)
    out = [model.features(xt[i:i + impl_batch], taus[i:i + impl_batch]).mean(dim=2)
           for i in range(0, len(x), impl_batch)]
    return torch.cat(out, dim=1).cpu().numpy()


def evaluate(cfg: SelfFlowConfig, variant: str, seed: int, device: str = "cpu") -> dict:
    """Probe accuracies per (setting, layer), held-out FM loss, samples and the loss curve
    (cached per config, seed and device type)."""
    cfg = relevant(cfg, variant)

    def compute():
        d = data(cfg, seed)
        res = trained(cfg, variant, seed, device=device)
        model = load_model(res, cfg.train, device)
        rows = []
        for name, tau, masked in PROBES:
            ftr = pooled_features(model, d["x_train"], tau, masked, seed)
            fte = pooled_features(model, d["x_test"], tau, masked, 1_000 + seed)
            for layer in range(ftr.shape[0]):
                rows.append({"variant": variant, "seed": seed, "probe": name, "layer": layer,
                             "acc": probe_accuracy(ftr[layer], d["y_train"], fte[layer],
                                                   d["y_test"], cfg.probe_c)})
        smp = sample(model, cfg.sample_n, cfg.sample_steps,
                     torch.Generator().manual_seed(30_000 + seed))
        return {"probes": rows, "fm_loss": heldout_fm_loss(model, d["x_test"], cfg.fm_draws),
                "samples": unpatchify(smp).numpy(), "curve": res["curve"]}

    return cached(PAPER, device_key(f"eval-{variant}", device), cfg, seed, CACHE_VERSION,
                  compute)


def to_compute(cfg: SelfFlowConfig, seed: int, variants=VARIANTS,
               device: str = "cpu") -> dict[str, str]:
    """What :func:`run_all` would compute instead of reading the cache, per variant: "train"
    (its model is not cached) or "evaluate" (the model is, its probes are not); a variant
    read whole is absent. Nothing runs (an app says before a Run what it costs)."""
    out = {}
    for v in variants:
        c = relevant(cfg, v)
        if not in_cache(PAPER, device_key(f"model-{v}", device), c.train, seed, CACHE_VERSION):
            out[v] = "train"
        elif not in_cache(PAPER, device_key(f"eval-{v}", device), c, seed, CACHE_VERSION):
            out[v] = "evaluate"
    return out


def pixel_probes(cfg: SelfFlowConfig, seed: int) -> list[dict]:
    """The raw-noisy-pixel reference through the same probe (64 features)."""
    d = data(cfg, seed)
    rows = []
    for name, tau, masked in PROBES:
        ftr = probe_inputs(d["x_train"], tau, masked, seed)[0].flatten(1).numpy()
        fte = probe_inputs(d["x_test"], tau, masked, 1_000 + seed)[0].flatten(1).numpy()
        rows.append({"seed": seed, "probe": name,
                     "acc": probe_accuracy(ftr, d["y_train"], fte, d["y_test"], cfg.probe_c)})
    return rows


def run_all(cfg: SelfFlowConfig, seed: int, variants=VARIANTS, progress=None,
            device: str = "cpu") -> dict:
    """Train (or load) and evaluate every variant at one seed: ``{variant: evaluate(...)}``.

    ``progress(label)`` is called before each model (tqdm in the notebook)."""
    resolve_device(device)
    out = {}
    for v in variants:
        if progress is not None:
            progress(v)
        trained(cfg, v, seed, device=device)
        out[v] = evaluate(cfg, v, seed, device)
    return out


def best_layer(rows: list[dict], variant: str, probe: str) -> tuple[float, int]:
    """Best accuracy over layers of one variant at one probe setting, and that layer."""
    sel = [r for r in rows if r["variant"] == variant and r["probe"] == probe]
    best = max(sel, key=lambda r: r["acc"])
    return best["acc"], best["layer"]


def probe_gaps(results: dict, a: str, b: str) -> dict:
    """Best-layer accuracy of ``a`` minus ``b`` per probe setting."""
    rows = [r for v in (a, b) for r in results[v]["probes"]]
    return {p: best_layer(rows, a, p)[0] - best_layer(rows, b, p)[0] for p, _, _ in PROBES}


# --------------------------------------------------------------------------- figures
def figure_probe_data(cfg: SelfFlowConfig, seeds, progress=None) -> list[dict]:
    """Probe accuracy rows over ``seeds`` (every variant, setting, layer) plus the pixel
    reference (``variant="raw pixels"``, ``layer=-1``)."""
    rows = []
    for s in seeds:
        res = run_all(cfg, s, progress=progress)
        rows += [r for v in VARIANTS for r in res[v]["probes"]]
        rows += [{**r, "variant": "raw pixels", "layer": -1} for r in pixel_probes(cfg, s)]
    return rows


def probe_summary(rows: list[dict]) -> list[dict]:
    """Mean and standard error over seeds per (variant, probe, layer)."""
    keys = sorted({(r["variant"], r["probe"], r["layer"]) for r in rows})
    out = []
    for v, p, layer in keys:
        a = np.array([r["acc"] for r in rows if (r["variant"], r["probe"], r["layer"])
                      == (v, p, layer)])
        se = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else 0.0
        out.append({"variant": v, "probe": p, "layer": layer, "mean": float(a.mean()),
                    "se": se, "n": len(a)})
    return out


def figure_schedule_data(cfg: TrainConfig, n: int = 4000, seed: int = 0) -> dict:
    """Samples of the student's and teacher's per-token noise levels under ``cfg`` (and of
    vanilla's one level per image): ``[n, T]`` arrays, the mask, ``tau_vanilla [n]``."""
    v = views("selfflow", n, cfg, torch.Generator().manual_seed(seed))
    van = views("vanilla", n, cfg, torch.Generator().manual_seed(seed))
    return {"tau_student": v["tau_s"].numpy(), "tau_teacher": v["tau_t"].numpy(),
            "mask": v["mask"].numpy(), "tau_vanilla": van["tau_s"][:, 0].numpy()}


def recorded(name: str = "selfflow_seeds", path: str | None = None):
    """A recorded table of the checkout, ``benchmarks/selfflow/<name>.csv`` (``selfflow_seeds``:
    every probe number on seeds 0-6; ``selfflow_claims``: the claims per seed), or an empty
    frame."""
    import pandas as pd

    p = Path(path) if path else Path(__file__).resolve().parents[2] / "benchmarks" / \
        "selfflow" / f"{name}.csv"
    return pd.read_csv(p) if p.exists() else pd.DataFrame()
