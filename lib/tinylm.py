"""The tiny causal transformer and the multi-hop task shared by ``heima`` and ``red``.

Task (both papers' "reasoning"): the prompt lists a random permutation ``P`` of ``M`` symbols in
key order, ``P(0) .. P(M-1)``, then a start symbol ``x0``; the answer after ``h`` hops is
``x_h = P^h(x0)``, with the chain ``x_1 .. x_h`` as the intermediate stages. A model must
follow pointers it reads in context, so each hop is one step of serial computation.

Model: a pre-LN decoder in the style of nanoGPT (learned absolute positions, GELU MLP 4x,
untied unembedding), returning the residual stream after every layer so that a paper can read
thinking states (heima) or activation statistics (red). It can also take input embeddings
directly (a paper that feeds hidden states back in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from icml26.common import check_int


# --------------------------------------------------------------------------- the hop task
@dataclass(frozen=True)
class HopBatch:
    """``prompt [B, M + 1]`` (the permutation in key order, then ``x0``); ``chain [B, h]``
    (``x_1 .. x_h``; the answer is ``chain[:, -1]``); ``perm [B, M]``."""

    prompt: torch.Tensor
    chain: torch.Tensor
    perm: torch.Tensor

    @property
    def answer(self) -> torch.Tensor:
        return self.chain[:, -1]


def hop_batch(n: int, hops: int, symbols: int, gen: torch.Generator) -> HopBatch:
    """``n`` prompts of the ``hops``-hop permutation task over ``symbols`` symbols (ids
    ``0 .. symbols-1``), drawn from ``gen``: ``x_{k+1} = P(x_k)``."""
    check_int("n", n, 1)
    check_int("hops", hops, 1)
    check_int("symbols", symbols, 2)
    perm = torch.argsort(torch.rand(n, symbols, generator=gen), dim=1)
    x0 = torch.randint(symbols, (n,), generator=gen)
    x, chain = x0, []
    for _ in range(hops):
        x = perm.gather(1, x[:, None])[:, 0]
        chain.append(x)
    return HopBatch(torch.cat([perm, x0[:, None]], 1), torch.stack(chain, 1), perm)


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class LMConfig:
    vocab: int
    n_ctx: int
    d_model: int = 32
    n_layers: int = 4
    n_heads: int = 2

    def validate(self) -> None:
        for name in ("vocab", "n_ctx", "d_model", "n_layers", "n_heads"):
            check_int(name, getattr(self, name), 1)
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                             f"({self.n_heads})")


class Block(nn.Module):
    """``x + Attn(LN(x))`` then ``x + MLP(LN(x))`` (causal multi-head attention)."""

    def __init__(self, d: int, heads: int):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class TinyLM(nn.Module):
    """``logits, hidden = model(idx)``: ``hidden[l]`` is the residual stream after block ``l``
    (``hidden[-1]`` before the final LayerNorm); ``model(embeds=e)`` skips the token lookup."""

    def __init__(self, cfg: LMConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = nn.Embedding(cfg.n_ctx, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg.d_model, cfg.n_heads) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)
        self.apply(self._init)

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, idx: torch.Tensor | None = None, embeds: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, list[torch.Tensor]]:
        x = self.tok(idx) if embeds is None else embeds
        t = x.shape[1]
        if t > self.cfg.n_ctx:
            raise ValueError(f"sequence of {t} tokens is longer than n_ctx={self.cfg.n_ctx}")
        x = x + self.pos(torch.arange(t, device=x.device))
        hidden = []
        for block in self.blocks:
            x = block(x)
            hidden.append(x)
        return self.head(self.ln_f(x)), hidden


def masked_ce(logits: torch.Tensor, targets: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Next-token cross-entropy where ``mask`` is True: ``logits[:, i]`` predicts
    ``targets[:, i]`` (callers pass the sequence shifted by one)."""
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           reduction="none").view(targets.shape)
    return (loss * mask).sum() / mask.sum().clamp_min(1)


def one_cycle(optimizer: torch.optim.Optimizer, steps: int, lr: float):
    """The one-cycle schedule both papers train with (10% warm-up, cosine decay to 0)."""
    warm = max(1, steps // 10)

    def factor(step: int) -> float:
        if step < warm:
            return (step + 1) / warm
        return 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warm) / max(1, steps - warm))))

    for g in optimizer.param_groups:
        g["lr"] = lr
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
