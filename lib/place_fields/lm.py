"""F4 of ``place_fields`` (derived, exploratory): RoPE vs HIPE in a toy Transformer.

The paper's evidence is OLMo-60M on C4 (validation perplexity vs training-set size), far beyond
CPU scale.  Here a tiny causal Transformer learns the synthetic multi-scale language of
:mod:`icml26.place_fields.task`.

Three positional variants share everything else: RoPE (scale 1), HIPE with one sigma for all
heads, HIPE with per-head sigmas geometric between ``sigma_min`` and ``sigma_max`` (a
"dorsal-to-ventral" population).  The attention applies them through the fused kernel
:func:`icml26.kernels.scaled_rope.scaled_rope` (``impl="auto"``: Triton with its autograd
backward on CUDA, the torch reference on CPU).

To keep CPU cost down, all (variant, data size) models of one seed train together as one
*ensemble*: every parameter has a leading member axis ``E`` and each member sees batches from its
own nested training subset; the loss is the sum of the members' losses, so gradients (and the
element-wise AdamW updates) never mix between members.  One seed's ensemble is cached with
:func:`icml26.common.cached`; the figure averages seeds ``seed, seed+1, ...`` (mean ± SE).
The dashboard reads the shipped validation losses of seeds 0-4
(``lib/data/place_fields_f4.json``, :func:`cached_or_shipped_frame`) instead of training; the
claims and the notebook train (or read the cache of their own training).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from icml26.common import cache_path, cached, config_hash, device_key, generator
from icml26.kernels.scaled_rope import scaled_rope
from icml26.place_fields.decay import PAPER
from icml26.place_fields.hipe import rope_frequencies
from icml26.place_fields.task import (
    VARIANT_LABELS,
    VARIANTS,
    LMConfig,
    task_data,
)

CACHE_VERSION = 1


class HipeTransformer(torch.nn.Module):
    """A pre-norm causal Transformer, ``E`` independent members trained side by side.

    ``forward(x [E, B, T]) -> logits [E, B, T, V]``.  ``scale [E, H, head_dim/2]`` is each
    member's fixed q/k scale (ones = RoPE, ``hipe_scale`` = HIPE); it is applied with the
    rotation by :func:`~icml26.kernels.scaled_rope.scaled_rope` (members stacked as heads).
    No absolute positions: the rotation is the only positional signal.
    """

    def __init__(self, cfg: LMConfig, scale: torch.Tensor, g: torch.Generator,
                 impl: str = "auto"):
        super().__init__()
        cfg.validate()
        e, h, hd, d = scale.shape[0], cfg.n_heads, cfg.head_dim, cfg.d_model
        if scale.shape != (e, h, hd // 2):
            raise ValueError(f"scale must be [E, n_heads, head_dim/2] = [E, {h}, {hd // 2}], "
                             f"got {tuple(scale.shape)}")
        self.cfg, self.impl, self.members = cfg, impl, e
        inner, hidden, depth = h * hd, cfg.mlp_ratio * d, 2 * cfg.n_layers

        def p(*shape, std):
            return torch.nn.Parameter(torch.randn(e, *shape, generator=g) * std)

        self.embed = p(cfg.vocab, d, std=1.0)
        self.unembed = p(d, cfg.vocab, std=d**-0.5)
        self.qkv = torch.nn.ParameterList([p(d, 3 * inner, std=d**-0.5)
                                           for _ in range(cfg.n_layers)])
        self.out = torch.nn.ParameterList([p(inner, d, std=(inner * depth) ** -0.5)
                                           for _ in range(cfg.n_layers)])
        mlp = cfg.n_layers if cfg.mlp_ratio else 0
        self.up = torch.nn.ParameterList([p(d, hidden, std=d**-0.5) for _ in range(mlp)])
        self.down = torch.nn.ParameterList([p(hidden, d, std=(hidden * depth) ** -0.5)
                                            for _ in range(mlp)])
        omega = rope_frequencies(hd, cfg.rope_base)
        angle = torch.arange(cfg.seq_len, dtype=torch.float64)[:, None] * omega[None, :]
        self.register_buffer("cos", angle.cos().float())
        self.register_buffer("sin", angle.sin().float())
        self.register_buffer("scale", scale.reshape(e * h, hd // 2).float().contiguous())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cfg, e = self.cfg, self.members
        if x.ndim != 3 or x.shape[0] != e or x.shape[2] > cfg.seq_len:
            raise ValueError(f"x must be [E={e}, B, T <= {cfg.seq_len}], got {tuple(x.shape)}")
        _, b, t = x.shape
        h, hd, d = cfg.n_heads, cfg.head_dim, cfg.d_model
        hid = torch.gather(self.embed, 1, x.reshape(e, b * t, 1).expand(-1, -1, d))
        for layer in range(cfg.n_layers):
            qkv = (F.rms_norm(hid, (d,)) @ self.qkv[layer]).view(e, b, t, 3, h, hd)
            q, k, v = (qkv[:, :, :, i].permute(1, 0, 3, 2, 4).reshape(b, e * h, t, hd)
                       for i in range(3))
            q, k = scaled_rope(q, k, self.cos[:t], self.sin[:t], self.scale, impl=self.impl)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # [B, E*H, T, hd]
            a = a.view(b, e, h, t, hd).permute(1, 0, 3, 2, 4).reshape(e, b * t, h * hd)
            hid = hid + a @ self.out[layer]
            if cfg.mlp_ratio:
                hid = hid + F.gelu(F.rms_norm(hid, (d,)) @ self.up[layer]) @ self.down[layer]
        return (F.rms_norm(hid, (d,)) @ self.unembed).view(e, b, t, cfg.vocab)

    def member_loss(self, x: torch.Tensor) -> torch.Tensor:
        """Next-token cross-entropy per member, ``[E]`` (nats/token)."""
        logits = self.forward(x)[:, :, :-1]
        ce = F.cross_entropy(logits.reshape(-1, self.cfg.vocab), x[:, :, 1:].reshape(-1),
                             reduction="none")
        return ce.view(self.members, -1).mean(1)


def members(cfg: LMConfig) -> list[tuple[str, int]]:
    """The ensemble: every (variant, training-set size) pair."""
    return [(v, n) for v in VARIANTS for n in cfg.sizes]


#: CPU threads while training: the tensors are tiny, so intra-op threads gain nothing on an
#: idle machine and spin badly on a shared one (the results are identical either way).
TRAIN_THREADS = 1


def train_seed(cfg: LMConfig, seed: int, impl: str = "auto", device: str = "cpu",
               progress: bool = False) -> dict:
    """Train every (variant, size) member for one seed; validation loss per member.

    Returns ``{"members": [(variant, size)], "val_loss": [E], "train_loss": [E],
    "curve_steps": [K], "curve": [K, E]}`` (numpy / lists, cheap to cache).
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    try:
        return _train_seed(cfg, seed, impl, device, progress)
    finally:
        torch.set_num_threads(threads)


def _train_seed(cfg: LMConfig, seed: int, impl: str, device: str, progress: bool) -> dict:
    cfg.validate()
    dev = torch.device(device)
    data = task_data(cfg, seed)
    train, val = data["train"].to(dev), data["val"].to(dev)
    mem = members(cfg)
    g = generator(20_000 + int(seed))
    scale = torch.stack([cfg.scale(v) for v, _ in mem])
    model = HipeTransformer(cfg, scale, g, impl=impl).to(dev)
    sizes = torch.tensor([n for _, n in mem], device=dev)
    decay, no_decay = [], []
    for name, par in model.named_parameters():
        (no_decay if name in ("embed",) else decay).append(par)
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=cfg.lr, betas=(0.9, 0.98))

    def lr_at(step: int) -> float:
        warm = min(1.0, (step + 1) / max(1, cfg.warmup))
        return warm * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
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
    with torch.no_grad():
        chunks = [model.member_loss(val[None, i:i + 128].expand(len(mem), -1, -1))
                  for i in range(0, cfg.n_val, 128)]
        weights = torch.tensor([min(128, cfg.n_val - i) for i in range(0, cfg.n_val, 128)],
                               dtype=torch.float32, device=dev)
        val_loss = (torch.stack(chunks) * weights[:, None]).sum(0) / weights.sum()
    return {"members": mem, "val_loss": val_loss.cpu().numpy(),
            "train_loss": curve[-1], "curve_steps": np.asarray(curve_steps),
            "curve": np.stack(curve)}


def seed_results(cfg: LMConfig, seed: int, impl: str = "auto", progress: bool = False,
                 device: str | torch.device = "cpu") -> dict:
    """:func:`train_seed` on ``device``, cached on disk per (config, seed, device type)."""
    return cached(PAPER, device_key("lm", device), cfg, int(seed), CACHE_VERSION,
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
    return frame_from_losses(cfg, seeds, [r["val_loss"] for r in runs])


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
    paths = [cache_path(PAPER, "lm", cfg, s, CACHE_VERSION) for s in seeds]
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


__all__ = [
    "CACHE_VERSION", "HipeTransformer", "LMConfig", "SHIPPED", "SHIPPED_SEEDS", "VARIANTS",
    "VARIANT_LABELS", "cached_or_shipped_frame", "config_key", "figure_data_efficiency_data",
    "frame_from_losses", "members", "seed_results", "task_data", "train_seed",
]
