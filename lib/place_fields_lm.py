"""F4 of ``place_fields`` (derived, exploratory): RoPE vs HIPE in a toy Transformer.

The paper's evidence is OLMo-60M on C4 (validation perplexity vs training-set size), far beyond
CPU scale.  Here a tiny causal Transformer learns a synthetic language with *multi-scale local
dependencies* at the spec's scales ``{1, 4, 16}``: for every token a window ``w`` is drawn from
``windows`` and a lag ``Delta`` uniformly from ``1..w``; the token is ``table[token t-Delta]``
with probability ``1 - noise``, else uniform.  The truth therefore lives at several relative
distances, with a multi-scale locality kernel ``P(Delta)`` (:func:`lag_prior`), so neither
i.i.d. tokens (nothing to find) nor a single lag (single-sigma HIPE tuned to it wins
trivially, the spec's pitfall) decides the comparison in advance.  (The spec's example drew one
exact lag per sequence; a per-token window keeps the task solvable by one attention layer,
which is all the CPU budget allows, and :func:`bayes_loss` gives its exact floor.)

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
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from icml26.claims import Claim
from icml26.common import cache_path, cached, config_hash
from icml26.kernels.scaled_rope import scaled_rope
from icml26.place_fields import DECAYS, F4_CLAIM, PAPER, hipe_scale, rope_frequencies

CACHE_VERSION = 1
VARIANTS = ("rope", "hipe_single", "hipe_multi")
VARIANT_LABELS = {"rope": "RoPE", "hipe_single": "HIPE, one sigma",
                  "hipe_multi": "HIPE, multi-sigma"}
#: Whether hipe_data_efficiency is expected at quick scale: only if it held for seeds 0-4.
#: Measured (worst slack, nats): seed 0 +0.005, 1 +0.005, 2 -0.005, 3 -0.005, 4 -0.005 -- it
#: holds for seeds 0 and 1 only, so it is reported, not expected.
EXPECT_EFFICIENCY = False


@dataclass(frozen=True)
class LMConfig:
    """Toy LM of F4.  Quick defaults are a cut-down version of the spec's suggestion.

    The spec suggests 2 layers, d = 64, 4 heads, context 64, ~300 steps at batch 32, 3 seeds;
    on a shared 2-core CPU that is several minutes per seed, so the quick scale keeps the
    context, heads, head size, steps and data sizes and halves width, depth and batch
    (``paper_config()`` restores the spec's model).
    """

    vocab: int = 32  # ours: a random permutation table over 32 tokens
    seq_len: int = 32  # spec 64; 32 holds the widest window (16) and halves the cost
    windows: tuple[int, ...] = (1, 4, 16)  # the spec's scales d in {1, 4, 16}, as lag windows
    noise: float = 0.1  # ours: fraction of uniform noise tokens
    d_model: int = 32  # spec 64 (halved for CPU)
    n_heads: int = 4  # spec
    head_dim: int = 16  # spec (64 / 4)
    n_layers: int = 1  # spec 2 (halved for CPU)
    mlp_ratio: int = 2  # ours (0 = attention only)
    rope_base: float = 1e4  # RoPE default and the authors' setting
    decay: str = "gaussian"  # the authors' default class decay; their scripts also use exp
    sigma_min: float = 1.0  # spec: geometric "between 2 and 64 tokens for a 64-token
    sigma_max: float = 32.0  # context"; here from 1 token to the 32-token context
    sigma_single: float = 5.66  # geometric mean of sigma_min and sigma_max
    sizes: tuple[int, ...] = (256, 1024, 4096, 16384)  # spec F4 x-axis (training sequences)
    n_val: int = 512  # held-out sequences
    steps: int = 300  # spec
    batch: int = 16  # spec 32 (halved for CPU)
    lr: float = 1e-2  # ours, AdamW for a tiny model
    weight_decay: float = 0.1  # authors' OLMo setting
    warmup: int = 30  # ours (10% of steps), then cosine decay to 0
    n_seeds: int = 2  # spec: 2 seeds by default (3 as an option)

    def validate(self) -> None:
        if isinstance(self.mlp_ratio, bool) or int(self.mlp_ratio) != self.mlp_ratio \
                or self.mlp_ratio < 0:
            raise ValueError(f"mlp_ratio must be an integer >= 0 (0: attention only), got "
                             f"{self.mlp_ratio!r}")
        for name in ("vocab", "seq_len", "d_model", "n_heads", "head_dim", "n_layers",
                     "n_val", "steps", "batch", "n_seeds"):
            v = getattr(self, name)
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.vocab < 2:
            raise ValueError(f"vocab must be >= 2, got {self.vocab}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim must be even, got {self.head_dim}")
        if not self.windows or min(self.windows) < 1 or max(self.windows) >= self.seq_len:
            raise ValueError(f"windows must lie in [1, seq_len={self.seq_len}), got "
                             f"{list(self.windows)}")
        if not 0 <= self.noise <= 1:
            raise ValueError(f"noise must be in [0, 1], got {self.noise}")
        if self.decay not in DECAYS:
            raise ValueError(f"decay must be one of {DECAYS}, got {self.decay!r}")
        if not 0 < self.sigma_min <= self.sigma_max or self.sigma_single <= 0:
            raise ValueError(f"need 0 < sigma_min <= sigma_max and sigma_single > 0, got "
                             f"{self.sigma_min}, {self.sigma_max}, {self.sigma_single}")
        if not self.sizes or min(self.sizes) < 1:
            raise ValueError(f"sizes must be >= 1 training sequences, got {list(self.sizes)}")
        if not (self.lr > 0 and self.weight_decay >= 0 and self.warmup >= 0):
            raise ValueError("need lr > 0, weight_decay >= 0 and warmup >= 0")
        rope_frequencies(self.head_dim, self.rope_base)

    def head_sigmas(self, variant: str) -> list[float]:
        """Per-head sigmas of a HIPE variant (RoPE has none)."""
        if variant == "hipe_single":
            return [self.sigma_single] * self.n_heads
        if variant == "hipe_multi":
            if self.n_heads == 1:
                return [math.sqrt(self.sigma_min * self.sigma_max)]
            r = (self.sigma_max / self.sigma_min) ** (1 / (self.n_heads - 1))
            return [self.sigma_min * r**i for i in range(self.n_heads)]
        raise ValueError(f"variant must be 'hipe_single' or 'hipe_multi', got {variant!r}")

    def scale(self, variant: str) -> torch.Tensor:
        """The ``[H, head_dim/2]`` q/k scale of a variant (ones for RoPE)."""
        if variant == "rope":
            return torch.ones(self.n_heads, self.head_dim // 2)
        return hipe_scale(self.head_sigmas(variant), self.head_dim, self.rope_base, self.decay)


def paper_config() -> LMConfig:
    """The spec's suggested toy model: 2 layers, d = 64, batch 32, 3 seeds, longer training."""
    return LMConfig(seq_len=64, d_model=64, n_layers=2, batch=32, steps=600, mlp_ratio=4,
                    n_seeds=3, warmup=60, sigma_min=2.0, sigma_max=64.0, sigma_single=11.3)


# --------------------------------------------------------------------------- the task
def _lags(cfg: LMConfig, shape: tuple[int, ...], g: torch.Generator) -> torch.Tensor:
    """Per-token lags: a window ``w`` drawn from ``windows``, then ``Delta ~ U{1..w}``."""
    w = torch.tensor(cfg.windows)[torch.randint(len(cfg.windows), shape, generator=g)]
    return 1 + (torch.rand(shape, generator=g) * w).long().clamp(max=w - 1)


def make_task(cfg: LMConfig, n: int, g: torch.Generator,
              table: torch.Tensor) -> torch.Tensor:
    """``n`` sequences ``[n, T]`` (int64) with multi-scale local dependencies.

    Token ``t`` is ``table[token t - Delta]`` with probability ``1 - noise`` (uniform
    otherwise, and whenever ``Delta > t``), where ``Delta`` is drawn per token: a window ``w``
    uniformly from ``windows``, then ``Delta`` uniform on ``1..w``.
    """
    x = torch.randint(cfg.vocab, (n, cfg.seq_len), generator=g)
    lags = _lags(cfg, (n, cfg.seq_len), g)
    keep = torch.rand(n, cfg.seq_len, generator=g) >= cfg.noise
    rows = torch.arange(n)
    for t in range(1, cfg.seq_len):
        src = x[rows, (t - lags[:, t]).clamp(min=0)]
        x[:, t] = torch.where(keep[:, t] & (lags[:, t] <= t), table[src], x[:, t])
    return x


def lag_prior(cfg: LMConfig) -> torch.Tensor:
    """``P(Delta = j)`` for ``j = 0..T-1`` (``j = 0`` has probability 0): the true kernel."""
    p = torch.zeros(cfg.seq_len, dtype=torch.float64)
    for w in cfg.windows:
        p[1:w + 1] += 1.0 / (w * len(cfg.windows))
    return p


def bayes_loss(cfg: LMConfig, x: torch.Tensor, table: torch.Tensor) -> float:
    """Cross-entropy (nats/token) of the exact predictive ``p(x_t | x_<t)`` on ``x [N, T]``.

    ``p = (1 - noise) [sum_{Delta <= t} P(Delta) 1(x_t = table[x_{t-Delta}])
    + P(Delta > t) / V] + noise / V``: the floor any model can reach on this data.
    """
    prior = lag_prior(cfg)
    n, t_len = x.shape
    mapped = table[x]  # [N, T]: the token each position would produce
    total = 0.0
    for t in range(1, t_len):
        lag = torch.arange(1, t + 1)
        hit = (mapped[:, t - lag] == x[:, t:t + 1]).double() @ prior[lag]
        beyond = float(prior[t + 1:].sum())
        p = (1 - cfg.noise) * (hit + beyond / cfg.vocab) + cfg.noise / cfg.vocab
        total += float(-torch.log(p).sum())
    return total / (n * (t_len - 1))


def task_data(cfg: LMConfig, seed: int) -> dict:
    """Training pool (the largest size; smaller sizes are its prefixes) and validation set."""
    g = torch.Generator().manual_seed(10_000 + int(seed))
    table = torch.randperm(cfg.vocab, generator=g)
    train = make_task(cfg, max(cfg.sizes), g, table)
    val = make_task(cfg, cfg.n_val, g, table)
    return {"table": table, "train": train, "val": val}


# --------------------------------------------------------------------------- the model
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
    g = torch.Generator().manual_seed(20_000 + int(seed))
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


def seed_results(cfg: LMConfig, seed: int, impl: str = "auto", progress: bool = False) -> dict:
    """:func:`train_seed`, cached on disk per (config, seed)."""
    return cached(PAPER, "lm", cfg, int(seed), CACHE_VERSION,
                  lambda: train_seed(cfg, seed, impl=impl, progress=progress))


def figure_data_efficiency_data(cfg: LMConfig | None = None, seed: int = 0,
                                n_seeds: int | None = None, impl: str = "auto",
                                progress: bool = False):
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
    runs = [seed_results(cfg, s, impl=impl, progress=progress) for s in seeds]
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


SHIPPED = Path(__file__).parent / "data" / "place_fields_f4.json"
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


def efficiency_claim(frame, cfg: LMConfig | None = None, seed: int = 0) -> Claim:
    """``hipe_data_efficiency`` from the F4 table: the worst slack in nats (> 0 holds).

    Slack at each of the two smallest sizes: ``(RoPE - HIPE_multi) - SE`` (paired SE over
    seeds); at the largest: ``0.02 - (HIPE_multi - RoPE)``.
    """
    cfg = LMConfig() if cfg is None else cfg
    sizes = sorted(cfg.sizes)
    multi = frame[frame.variant == "hipe_multi"].set_index("size")
    slack = [(-multi.loc[s, "diff_mean"]) - multi.loc[s, "diff_se"] for s in sizes[:2]]
    slack.append(0.02 - multi.loc[sizes[-1], "diff_mean"])
    detail = "; ".join(f"n={s}: HIPE-multi - RoPE = {multi.loc[s, 'diff_mean']:+.3f} ± "
                       f"{multi.loc[s, 'diff_se']:.3f}" for s in sizes)
    name, statement, op, threshold = F4_CLAIM
    return Claim(PAPER, name, statement, float(np.min(slack)), op, threshold, EXPECT_EFFICIENCY,
                 note=f"derived toy LM (multi-scale window task, {cfg.n_layers}-layer "
                 f"d={cfg.d_model}, {cfg.steps} steps), seeds {seed}..{seed + cfg.n_seeds - 1}, "
                 f"paired SE; worst slack in nats. {detail}"
                 + ("; holds for seeds 0-1 but not 2-4 (checked), so not expected"
                    if cfg == LMConfig() else ""))


__all__ = [
    "EXPECT_EFFICIENCY", "HipeTransformer", "LMConfig", "VARIANTS", "bayes_loss",
    "cached_or_shipped_frame", "efficiency_claim", "figure_data_efficiency_data",
    "frame_from_losses", "lag_prior", "make_task", "members", "paper_config", "seed_results",
    "task_data", "train_seed",
]
