"""The toy Transformer of ``place_fields``' F4: ``E`` independent members trained side by side.

All (variant, data size) models of one seed train together as one *ensemble*: every parameter
has a leading member axis ``E``; the loss is the sum of the members' losses, so gradients (and
the element-wise AdamW updates) never mix between members.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from icml26.kernels.scaled_rope import scaled_rope
from icml26.place_fields.hipe import rope_frequencies
from icml26.place_fields.task import VARIANTS, LMConfig


class HipeTransformer(torch.nn.Module):
    """A pre-norm causal Transformer, ``E`` independent members trained side by side.

    ``forward(x [E, B, T]) -> logits [E, B, T, V]``.  ``scale`` is each member's fixed q/k
    scale (ones = RoPE, ``hipe_scale`` = HIPE), ``[E, H, head_dim/2]`` for every layer or
    ``[L, E, H, head_dim/2]`` per layer; it is applied with the rotation by
    :func:`~icml26.kernels.scaled_rope.scaled_rope` (members stacked as heads).  No absolute
    positions: the rotation is the only positional signal.  ``shared_init``: every member
    starts from the same weights (one draw, repeated), so members differ only by their scale.
    """

    def __init__(self, cfg: LMConfig, scale: torch.Tensor, g: torch.Generator,
                 impl: str = "auto", shared_init: bool = False):
        super().__init__()
        cfg.validate()
        h, hd, d, n_l = cfg.n_heads, cfg.head_dim, cfg.d_model, cfg.n_layers
        if scale.ndim == 3:
            scale = scale[None].expand(n_l, -1, -1, -1)
        e = scale.shape[1]
        if scale.shape != (n_l, e, h, hd // 2):
            raise ValueError(f"scale must be [E, n_heads, head_dim/2] or [n_layers, E, "
                             f"n_heads, head_dim/2] = [{n_l}, E, {h}, {hd // 2}], got "
                             f"{tuple(scale.shape)}")
        self.cfg, self.impl, self.members = cfg, impl, e
        inner, hidden, depth = h * hd, cfg.mlp_ratio * d, 2 * cfg.n_layers

        def p(*shape, std):
            if shared_init:
                return torch.nn.Parameter(
                    (torch.randn(1, *shape, generator=g) * std).repeat(e, *[1] * len(shape)))
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
        self.register_buffer("scale", scale.reshape(n_l, e * h, hd // 2).float().contiguous())

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
            q, k = scaled_rope(q, k, self.cos[:t], self.sin[:t], self.scale[layer],
                               impl=self.impl)
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


def optimizer(model: HipeTransformer, cfg: LMConfig, lr: float) -> torch.optim.AdamW:
    """AdamW with weight decay on every matrix but the embedding (the authors' OLMo setting)."""
    decay, no_decay = [], []
    for name, par in model.named_parameters():
        (no_decay if name in ("embed",) else decay).append(par)
    return torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.98))


def cosine_schedule(steps: int, warmup: int):
    """Linear warmup over ``warmup`` steps, then cosine decay to 0 at ``steps``."""
    def lr_at(step: int) -> float:
        warm = min(1.0, (step + 1) / max(1, warmup))
        return warm * 0.5 * (1 + math.cos(math.pi * step / steps))
    return lr_at


@torch.no_grad()
def held_out_loss(model: HipeTransformer, x: torch.Tensor, chunk: int = 128) -> torch.Tensor:
    """Every member's mean next-token loss on the same sequences ``x [N, T]``, ``[E]``."""
    losses, weights = [], []
    for i in range(0, x.shape[0], chunk):
        part = x[None, i:i + chunk].expand(model.members, -1, -1)
        losses.append(model.member_loss(part))
        weights.append(part.shape[1])
    w = torch.tensor(weights, dtype=torch.float32, device=x.device)
    return (torch.stack(losses) * w[:, None]).sum(0) / w.sum()
