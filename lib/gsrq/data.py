"""Synthetic KV-like vectors for ``gsrq``'s F1/F2 (ours: the paper's data is LLaMA-3-8B's cache).

Anisotropic channels (std ``j^-decay``) with a few outlier channels, directions rescaled to
equal norms, optionally times a lognormal per-token norm factor (the spec's heavy tail).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from icml26.common import check_int

TINY = 1e-30


@dataclass(frozen=True)
class KVDataConfig:
    """Synthetic KV-like vectors. Defaults: the spec's probe size (N = 8192, d = 128)."""

    n: int = 8192  # spec probe
    dim: int = 128  # head dimension of LLaMA-3-8B, the paper's model
    decay: float = 0.5  # channel std j^-decay: an anisotropic spectrum (ours)
    n_outliers: int = 4  # outlier channels at random positions (ours; LLM keys show a few)
    outlier_scale: float = 4.0  # their std, in units of the base channels' RMS (ours)
    norm_tail: float = 0.0  # sigma of a lognormal per-token norm; 0 = equal norms, 0.8 = spec

    def validate(self) -> None:
        check_int("n", self.n, 1)
        check_int("dim", self.dim, 1)
        check_int("n_outliers", self.n_outliers, 0, self.dim)
        for name in ("decay", "outlier_scale", "norm_tail"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")


#: The two data settings of F2 and of the claims.
EQUAL_NORM = KVDataConfig()
HEAVY_TAIL = KVDataConfig(norm_tail=0.8)  # the spec's lognormal sigma


def make_kv_data(cfg: KVDataConfig, generator: torch.Generator,
                 device: str | torch.device = "cpu") -> torch.Tensor:
    """``[n, dim]`` float32 KV-like vectors (see the module docstring).

    Directions: ``z_ij ~ N(0, sigma_j^2)`` with ``sigma_j = j^-decay`` and ``n_outliers``
    channels (random positions) at ``outlier_scale * RMS(sigma)``; every row is rescaled to the
    norm ``||sigma||`` and, when ``norm_tail > 0``, multiplied by ``exp(norm_tail * eps_i)``.
    """
    cfg.validate()
    base = torch.arange(1, cfg.dim + 1, dtype=torch.float32) ** -cfg.decay
    scale = base.clone()
    pos = torch.randperm(cfg.dim, generator=generator)[: cfg.n_outliers]
    scale[pos] = cfg.outlier_scale * base.pow(2).mean().sqrt()
    z = torch.randn(cfg.n, cfg.dim, generator=generator) * scale
    z = z / z.norm(dim=1, keepdim=True).clamp_min(TINY) * scale.norm()
    if cfg.norm_tail > 0:
        z = z * torch.exp(cfg.norm_tail * torch.randn(cfg.n, 1, generator=generator))
    return z.to(device)
