"""The data (sklearn digits as 16 patch tokens) and a tiny DiT with per-token timesteps.

Digits: 8x8 images with values 0..16, scaled to ``[-1, 1]`` and cut into 16 tokens of 2x2
patches (4 values each), ``[N, 16, 4]``.  The flow path is linear: ``x_tau = (1 - tau) x +
tau eps`` per token, velocity target ``v = eps - x`` (tau = 0 data, tau = 1 noise).

The DiT (Self-Flow's ``SelfFlowPerTokenDiT`` shape, scaled down): patch embedding + learned
positions; every token carries its own timestep embedding ``c_i = MLP(sincos(tau_i))``; each
block is adaLN-zero with per-token modulation::

    h = h + g1 * Attn(ln_modulate(h, shift1, scale1)),  h = h + g2 * MLP(ln_modulate(h, ...))

where ``(shift, scale, gate)`` come from ``Linear(SiLU(c_i))`` (zero-initialised).
``ln_modulate`` is the fused kernel ``icml26.kernels.ln_modulate`` (Triton on CUDA without
grad; the torch reference in training and on CPU).  An optional boolean ``group`` per token
restricts attention to tokens of the same group (the "attention separation" control).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from icml26.kernels.ln_modulate import ln_modulate

PATCH = 2
SIDE = 8
N_TOKENS = (SIDE // PATCH) ** 2  # 16
TOKEN_DIM = PATCH * PATCH  # 4


def load_digits() -> tuple[torch.Tensor, torch.Tensor]:
    """sklearn's digits as tokens ``[1797, 16, 4]`` in ``[-1, 1]`` and labels ``[1797]``."""
    from sklearn.datasets import load_digits as sk_digits

    d = sk_digits()
    img = torch.tensor(d.images, dtype=torch.float32) / 8.0 - 1.0
    return patchify(img), torch.tensor(d.target, dtype=torch.long)


def patchify(img: torch.Tensor) -> torch.Tensor:
    """``[N, 8, 8] -> [N, 16, 4]`` (row-major 2x2 patches)."""
    if img.ndim != 3 or img.shape[1:] != (SIDE, SIDE):
        raise ValueError(f"images must be [N, {SIDE}, {SIDE}], got {tuple(img.shape)}")
    n = img.shape[0]
    k = SIDE // PATCH
    return img.reshape(n, k, PATCH, k, PATCH).permute(0, 1, 3, 2, 4).reshape(n, k * k, -1)


def unpatchify(tok: torch.Tensor) -> torch.Tensor:
    """``[N, 16, 4] -> [N, 8, 8]``."""
    n = tok.shape[0]
    k = SIDE // PATCH
    return tok.reshape(n, k, k, PATCH, PATCH).permute(0, 1, 3, 2, 4).reshape(n, SIDE, SIDE)


def split_indices(n: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A seeded train/test split of ``n`` rows (``n_test`` held out)."""
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(10_000 + seed)).numpy()
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def noised(x: torch.Tensor, eps: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """``x_tau = (1 - tau) x + tau eps`` with per-token ``tau [B, T]``."""
    return (1 - tau[..., None]) * x + tau[..., None] * eps


@dataclass(frozen=True)
class DiTConfig:
    """The tiny DiT.  Defaults: the spec's calibrated prototype (d=48, 4 layers) widened to
    d=64 with 4 heads, still a few seconds per hundred steps on one CPU core."""

    dim: int = 64
    depth: int = 4
    heads: int = 4
    mlp_ratio: float = 2.0

    def validate(self) -> None:
        if self.dim < 8 or self.dim % self.heads:
            raise ValueError(f"dim must be >= 8 and divisible by heads, got dim={self.dim}, "
                             f"heads={self.heads}")
        if self.depth < 2:
            raise ValueError(f"depth must be >= 2 (a student and a deeper teacher layer), "
                             f"got {self.depth}")


def timestep_embedding(tau: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding of ``tau`` in [0, 1] (times 1000, as DiT): ``[...] -> [..., dim]``."""
    half = dim // 2
    freqs = torch.exp(-math.log(10_000) * torch.arange(half, dtype=torch.float32,
                                                       device=tau.device) / half)
    ang = 1000.0 * tau[..., None].float() * freqs
    return torch.cat([torch.cos(ang), torch.sin(ang)], dim=-1)


class Block(nn.Module):
    """A DiT block with per-token adaLN-zero modulation."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(approximate="tanh"),
                                 nn.Linear(hidden, dim))
        self.ada = nn.Linear(dim, 6 * dim)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, h: torch.Tensor, c: torch.Tensor, attn_mask: torch.Tensor | None = None,
                impl: str = "auto") -> torch.Tensor:
        sh1, sc1, g1, sh2, sc2, g2 = self.ada(nn.functional.silu(c)).chunk(6, dim=-1)
        b, t, d = h.shape
        q, k, v = self.qkv(ln_modulate(h, sh1, sc1, impl=impl)).view(b, t, 3, self.heads,
                                                          d // self.heads).unbind(2)
        a = nn.functional.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=attn_mask)
        h = h + g1 * self.proj(a.transpose(1, 2).reshape(b, t, d))
        return h + g2 * self.mlp(ln_modulate(h, sh2, sc2, impl=impl))


class TinyDiT(nn.Module):
    """``forward(x_tau [B, T, 4], tau [B, T]) -> v [B, T, 4]``; ``features`` gives every
    block's output ``[depth, B, T, dim]``."""

    def __init__(self, cfg: DiTConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.embed = nn.Linear(TOKEN_DIM, cfg.dim)
        self.pos = nn.Parameter(torch.randn(1, N_TOKENS, cfg.dim) * 0.02)
        self.t_mlp = nn.Sequential(nn.Linear(cfg.dim, cfg.dim), nn.SiLU(),
                                   nn.Linear(cfg.dim, cfg.dim))
        self.blocks = nn.ModuleList(Block(cfg.dim, cfg.heads, cfg.mlp_ratio)
                                    for _ in range(cfg.depth))
        self.final_ada = nn.Linear(cfg.dim, 2 * cfg.dim)
        self.out = nn.Linear(cfg.dim, TOKEN_DIM)
        for m in (self.final_ada, self.out):
            nn.init.zeros_(m.weight)
            nn.init.zeros_(m.bias)

    def run(self, x: torch.Tensor, tau: torch.Tensor, group: torch.Tensor | None = None,
            upto: int | None = None, impl: str = "auto"
            ) -> tuple[torch.Tensor | None, list[torch.Tensor]]:
        """Velocity (``None`` when stopped at block ``upto``) and block outputs; ``impl`` picks
        the ``ln_modulate`` implementation (``"auto"``: Triton on CUDA without grad)."""
        if x.ndim != 3 or x.shape[1:] != (N_TOKENS, TOKEN_DIM) or tau.shape != x.shape[:2]:
            raise ValueError(f"x must be [B, {N_TOKENS}, {TOKEN_DIM}] and tau [B, {N_TOKENS}],"
                             f" got {tuple(x.shape)} and {tuple(tau.shape)}")
        c = self.t_mlp(timestep_embedding(tau, self.cfg.dim))
        h = self.embed(x) + self.pos
        mask = None
        if group is not None:  # attention separation: tokens see only their own group
            mask = (group[:, :, None] == group[:, None, :])[:, None]
        feats = []
        for i, blk in enumerate(self.blocks):
            h = blk(h, c, mask, impl)
            feats.append(h)
            if upto is not None and i == upto:
                return None, feats
        sh, sc = self.final_ada(nn.functional.silu(c)).chunk(2, dim=-1)
        return self.out(ln_modulate(h, sh, sc, impl=impl)), feats

    def forward(self, x: torch.Tensor, tau: torch.Tensor,
                group: torch.Tensor | None = None) -> torch.Tensor:
        return self.run(x, tau, group)[0]

    @torch.no_grad()
    def features(self, x: torch.Tensor, tau: torch.Tensor, impl: str = "auto") -> torch.Tensor:
        """Every block's output, ``[depth, B, T, dim]`` (no grad: probing)."""
        return torch.stack(self.run(x, tau, upto=self.cfg.depth - 1, impl=impl)[1])


@torch.no_grad()
def sample(model: TinyDiT, n: int, steps: int, gen: torch.Generator) -> torch.Tensor:
    """Euler integration of ``dx/dtau = v`` from noise (tau = 1) to data: ``[n, 16, 4]``
    (on the CPU; computed where ``model``'s parameters are, the noise drawn on the CPU)."""
    dev = next(model.parameters()).device
    x = torch.randn(n, N_TOKENS, TOKEN_DIM, generator=gen).to(dev)
    taus = torch.linspace(1.0, 0.0, steps + 1)
    for a, b in zip(taus[:-1], taus[1:]):
        v = model(x, torch.full((n, N_TOKENS), float(a), device=dev))
        x = x + (b - a) * v
    return x.clamp(-1.5, 1.5).cpu()
