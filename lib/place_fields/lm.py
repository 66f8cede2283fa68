"""F4 of ``place_fields`` (derived, exploratory): RoPE vs HIPE in a toy Transformer.

The paper's evidence is OLMo-60M on C4, far beyond CPU scale.  Here a tiny causal Transformer
(:mod:`icml26.place_fields.transformer`) learns the synthetic multi-scale language of
:mod:`icml26.place_fields.task`.  Three positional variants share everything else: RoPE
(scale 1), HIPE with one sigma for all heads, HIPE with per-head sigmas geometric between
``sigma_min`` and ``sigma_max`` (a "dorsal-to-ventral" population); HIPE sits in the upper
``hipe_layers`` layers, the lower ones keep RoPE (the authors' setting).

Two protocols (``LMConfig.protocol``):

* ``"adapt"`` (second design, issue 47, the default): pretrain on one source, adapt on ``k``
  sequences of a shifted source, early-stopped on validation, scored on a test set
  (:mod:`icml26.place_fields.adapt`);
* ``"scratch"`` (first design, :func:`~icml26.place_fields.task.first_design_config`): train
  from scratch on each size for a fixed number of steps (:func:`train_seed`).

One seed's results are cached with :func:`icml26.common.cached`; the figure averages seeds
``seed, seed+1, ...`` (mean ± SE).  The dashboard reads the shipped losses of seeds 0-4
(``lib/data/place_fields_f4.json``, :func:`cached_or_shipped_frame`) instead of training; the
claims and the notebook train (or read the cache of their own training).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch

from icml26.common import cache_path, cached, config_hash, device_key, generator
from icml26.place_fields import adapt
from icml26.place_fields.decay import PAPER
from icml26.place_fields.task import (
    VARIANT_LABELS,
    VARIANTS,
    LMConfig,
    task_data,
)
from icml26.place_fields.transformer import (
    TRAIN_THREADS,
    HipeTransformer,
    cosine_schedule,
    held_out_loss,
    members,
    optimizer,
)

#: 2: the second design (issue 47); scratch runs are keyed by their own config hash
CACHE_VERSION = 2


def train_seed(cfg: LMConfig, seed: int, impl: str = "auto", device: str = "cpu",
               progress: bool = False) -> dict:
    """Train every (variant, size) member for one seed under ``cfg.protocol``.

    Returns ``{"members": [(variant, size)], "val_loss": [E], ...}`` (numpy / lists, cheap to
    cache); ``val_loss`` is the held-out loss each member is scored by (adapt: the test loss at
    the early-stopped checkpoint; scratch: the validation loss after ``steps``).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        if cfg.protocol == "adapt":
            return adapt.train_seed(cfg, seed, impl, device, progress)
        return _train_scratch(cfg, seed, impl, device, progress)
    finally:
        torch.set_num_threads(threads)


def _train_scratch(cfg: LMConfig, seed: int, impl: str, device: str, progress: bool) -> dict:
    cfg.validate()
    dev = torch.device(device)
    data = task_data(cfg, seed)
    train, val = data["train"].to(dev), data["val"].to(dev)
    mem = members(cfg)
    g = generator(20_000 + int(seed))
    scale = torch.stack([cfg.layer_scale(v) for v, _ in mem], dim=1)
    model = HipeTransformer(cfg, scale, g, impl=impl).to(dev)
    sizes = torch.tensor([n for _, n in mem], device=dev)
    opt = optimizer(model, cfg, cfg.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, cosine_schedule(cfg.steps, cfg.warmup))
    every = max(1, cfg.steps // 10)
    curve_steps, curve = [], []
    steps = range(cfg.steps)
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=f"F4 seed {seed}", leave=False)
    for step in steps:
        idx = (torch.rand(len(mem), cfg.batch, generator=g) * sizes.cpu()[:, None]).long()
        loss = model.member_loss(train[idx.to(dev)])
        if not torch.isfinite(loss).all():
            raise FloatingPointError(f"non-finite training loss at step {step}: "
                                     f"{loss.tolist()}")
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        sched.step()
        if step % every == 0 or step == cfg.steps - 1:
            curve_steps.append(step)
            curve.append(loss.detach().cpu().numpy())
    model.eval()
    val_loss = held_out_loss(model, val)
    return {"members": mem, "val_loss": val_loss.cpu().numpy(),
            "train_loss": curve[-1], "curve_steps": np.asarray(curve_steps),
            "curve": np.stack(curve)}


def cache_key(cfg: LMConfig) -> str:
    """The cache's name for a protocol's runs."""
    return "lm" if cfg.protocol == "scratch" else "adapt"


def seed_results(cfg: LMConfig, seed: int, impl: str = "auto", progress: bool = False,
                 device: str | torch.device = "cpu") -> dict:
    """:func:`train_seed` on ``device``, cached on disk per (config, seed, device type)."""
    return cached(PAPER, device_key(cache_key(cfg), device), cfg, int(seed), CACHE_VERSION,
                  lambda: train_seed(cfg, seed, impl=impl, device=device, progress=progress))


def figure_data_efficiency_data(cfg: LMConfig | None = None, seed: int = 0,
                                n_seeds: int | None = None, impl: str = "auto",
                                progress: bool = False, device: str | torch.device = "cpu"):
    """F4 table for seeds ``seed .. seed + n_seeds - 1`` (each seed trained once, cached).

    One row per (variant, size): ``mean`` and ``se`` of the validation loss over seeds, the
    paired (same seed, same data) difference to RoPE ``diff_mean`` / ``diff_se``, the seeds
    and the per-seed ``losses``.  Returns a pandas DataFrame.
    """
    cfg = LMConfig() if cfg is None else cfg
    cfg.validate()
    n = cfg.n_seeds if n_seeds is None else int(n_seeds)
    if n < 1:
        raise ValueError(f"n_seeds must be >= 1, got {n}")
    seeds = list(range(int(seed), int(seed) + n))
    runs = [seed_results(cfg, s, impl=impl, progress=progress, device=device) for s in seeds]
    frame = frame_from_losses(cfg, seeds, [r["val_loss"] for r in runs])
    if cfg.protocol == "adapt":  # members whose validation loss still fell at the last step
        frame.attrs["unconverged"] = int(sum((r["best_step"] >= cfg.steps).sum() for r in runs))
    return frame


def frame_from_losses(cfg: LMConfig, seeds: list[int], losses) -> object:
    """The F4 DataFrame from per-seed validation losses ``[seeds][E]`` (members order)."""
    import pandas as pd

    mem = members(cfg)
    losses = np.asarray(losses, dtype=float).reshape(len(seeds), len(mem))
    n = len(seeds)
    rope = {size: losses[:, mem.index(("rope", size))] for size in cfg.sizes}
    rows = []
    for j, (variant, size) in enumerate(mem):
        vals = losses[:, j]
        diff = vals - rope[size]
        se = vals.std(ddof=1) / math.sqrt(n) if n > 1 else float("nan")
        dse = diff.std(ddof=1) / math.sqrt(n) if n > 1 else float("nan")
        rows.append({"variant": variant, "label": VARIANT_LABELS[variant], "size": size,
                     "mean": float(vals.mean()), "se": float(se),
                     "diff_mean": float(diff.mean()), "diff_se": float(dse),
                     "seeds": list(seeds), "losses": vals.tolist()})
    return pd.DataFrame(rows)


SHIPPED = Path(__file__).resolve().parents[1] / "data" / "place_fields_f4.json"
SHIPPED_SEEDS = tuple(range(5))


def config_key(cfg: LMConfig) -> str:
    """The cache's hash of a config (the shipped results name the config they came from)."""
    return config_hash(cfg)


def cached_or_shipped_frame(cfg: LMConfig | None = None,
                            seeds: tuple[int, ...] = SHIPPED_SEEDS):
    """F4 for ``seeds`` without training: from the cache when every seed is there, else from
    the shipped results of the default config (``lib/data/place_fields_f4.json``), else None.
    """
    cfg = LMConfig() if cfg is None else cfg
    paths = [cache_path(PAPER, cache_key(cfg), cfg, s, CACHE_VERSION) for s in seeds]
    if all(p.exists() for p in paths):
        try:
            runs = [seed_results(cfg, s) for s in seeds]
            return frame_from_losses(cfg, list(seeds), [r["val_loss"] for r in runs])
        except (OSError, RuntimeError, ValueError):  # a broken entry: fall back
            pass
    if not SHIPPED.exists():
        return None
    blob = json.loads(SHIPPED.read_text())
    if blob.get("config_hash") != config_key(cfg) or blob.get("cache_version") != CACHE_VERSION:
        return None  # shipped for another config: stale
    have = {int(k): v for k, v in blob["val_loss"].items()}
    if not all(s in have for s in seeds):
        return None
    return frame_from_losses(cfg, list(seeds), [have[s] for s in seeds])


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks" / "place_fields"


def diagnosis_record(name: str = "place_fields_diagnosis.csv"):
    """A committed F4 record (issue 47) as a DataFrame, empty when absent (an install without
    the repository's benchmarks folder): the first design's diagnosis
    (``place_fields_diagnosis.py``) or, with ``name="place_fields_second_design.csv"``, the
    second design per seed and member (``place_fields_second_design.py``)."""
    import pandas as pd

    path = BENCHMARKS / name
    return pd.read_csv(path) if path.exists() else pd.DataFrame()


__all__ = [
    "CACHE_VERSION", "HipeTransformer", "LMConfig", "SHIPPED", "SHIPPED_SEEDS", "VARIANTS",
    "VARIANT_LABELS", "cached_or_shipped_frame", "config_key", "figure_data_efficiency_data",
    "frame_from_losses", "members", "seed_results", "task_data", "train_seed",
    "cache_key", "diagnosis_record",
]
