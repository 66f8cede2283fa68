"""The model of toy "D" (:mod:`icml26.function_vectors`): a small pre-LN decoder with head
hooks.

Pre-LN decoder (3 layers, d = 64, 4 heads of 16, MLP 4x, learned absolute positions,
untied unembedding; about 0.15 M parameters). Attention is written out head by head so that
per-head outputs ``z_h`` (before ``W_O``), pre-softmax scores, attention weights and values are
recorded, head outputs at the final token can be replaced (``head_patch``), attention weights
can be supplied from outside (``attn_override``) and vectors added to the residual stream after
any layer (``resid_add``). Everything here is ours (the paper studies LLMs; no LLM weights can
be loaded in this project), following the spec's prototype "D".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from icml26.function_vectors.prompts import N_CTX, PAD, VOCAB, attention_mask, default_positions


# --------------------------------------------------------------------------- configs
@dataclass(frozen=True)
class ModelConfig:
    """The spec's prototype architecture (3 layers, d = 64, 4 heads, MLP 4x)."""

    n_layers: int = 3
    d_model: int = 64
    n_heads: int = 4
    d_mlp: int = 256
    # the first ``attn_only_layers`` layers have no MLP (0: the spec's model; see the
    # notebook's "second design": an MLP there can write the task code past the heads)
    attn_only_layers: int = 0
    positions: str = "slots"  # "slots": fixed slot positions (ours); "packed": 0.. over the
    #                           present tokens (the spec's variable-length prompts)

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        for name in ("n_layers", "d_model", "n_heads", "d_mlp"):
            v = getattr(self, name)
            if int(v) != v or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not 0 <= self.attn_only_layers < self.n_layers:
            raise ValueError(f"attn_only_layers must be in 0..{self.n_layers - 1}, got "
                             f"{self.attn_only_layers}")
        if self.positions not in ("slots", "packed"):
            raise ValueError(f"positions must be 'slots' or 'packed', got {self.positions!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads "
                             f"({self.n_heads})")



# --------------------------------------------------------------------------- model
@dataclass
class HeadPatch:
    """Replace head outputs ``z`` at the final token: ``values [B, L, H, dh]`` where
    ``mask [B, L, H]`` is True."""

    mask: torch.Tensor
    values: torch.Tensor


@dataclass
class Record:
    """Per-layer tensors of one forward pass (lists indexed by layer).

    ``q, k, v [B, T, H, dh]``; ``scores [B, H, T, T]`` (pre-softmax, masked entries -inf);
    ``attn [B, H, T, T]``; ``z [B, T, H, dh]`` (head outputs before ``W_O``);
    ``resid [B, T, D]`` (residual after each layer); ``resid_mid`` (after attention).
    """

    q: list
    k: list
    v: list
    scores: list
    attn: list
    z: list
    resid: list
    resid_mid: list
    embed: torch.Tensor | None = None


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig, has_mlp: bool = True):
        super().__init__()
        self.cfg = cfg
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)
        self.out = nn.Linear(cfg.d_model, cfg.d_model, bias=False)  # W_O, no bias (exact
        self.ln2 = nn.LayerNorm(cfg.d_model) if has_mlp else None   # decomposition)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_mlp), nn.GELU(),
                                 nn.Linear(cfg.d_mlp, cfg.d_model)) if has_mlp else None

    def mlp_out(self, x: torch.Tensor) -> torch.Tensor:
        """What the MLP sublayer adds to the residual ``x`` (zero in an attention-only
        layer)."""
        return self.mlp(self.ln2(x)) if self.mlp is not None else torch.zeros_like(x)

    def w_o(self) -> torch.Tensor:
        """``W_O`` per head: ``[H, dh, D]`` (head output ``z_h`` maps to ``z_h @ W_O[h]``)."""
        c = self.cfg
        return self.out.weight.T.reshape(c.n_heads, c.d_head, c.d_model)

    def attention(self, x, allowed, layer, head_patch=None, attn_override=None, rec=None):
        """The attention sublayer's output ``sum_h z_h W_O[h]`` ``[B, T, D]`` (what the block
        adds to the residual before its MLP), with the head hooks."""
        c = self.cfg
        b, t, _ = x.shape
        qh, kh, vh = self.qkv(self.ln1(x)).view(b, t, 3, c.n_heads, c.d_head).permute(
            2, 0, 3, 1, 4)  # 3 x [B, H, T, dh]
        scores = (qh * (1 / math.sqrt(c.d_head))) @ kh.transpose(-1, -2)
        scores = scores.masked_fill(~allowed[:, None], -math.inf)
        a = torch.softmax(scores, -1)
        if attn_override is not None and layer in attn_override:
            heads, weights = attn_override[layer]
            a = torch.where(heads.to(x.device)[None, :, None, None], weights, a)
        z = (a @ vh).transpose(1, 2)  # [B, T, H, dh]
        if head_patch is not None:
            m = head_patch.mask[:, layer]  # [B, H]
            last = torch.where(m[:, :, None], head_patch.values[:, layer], z[:, -1])
            z = torch.cat([z[:, :-1], last[:, None]], 1)
        if rec is not None:
            q, k, v = (u.transpose(1, 2) for u in (qh, kh, vh))
            for name, val in (("q", q), ("k", k), ("v", v), ("scores", scores), ("attn", a),
                              ("z", z)):
                getattr(rec, name).append(val)
        return self.out(z.reshape(b, t, c.d_model))

    def forward(self, x, allowed, layer, head_patch=None, attn_override=None, rec=None):
        mid = x + self.attention(x, allowed, layer, head_patch, attn_override, rec)
        x = mid + self.mlp_out(mid)
        if rec is not None:
            rec.resid_mid.append(mid)
            rec.resid.append(x)
        return x


class FVTransformer(nn.Module):
    """Pre-LN decoder with head hooks. Input ``tokens [B, T]`` (T <= 20, right-aligned:
    the final token is always at position 19), output logits ``[B, T, V]``."""

    def __init__(self, cfg: ModelConfig = ModelConfig()):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.embed = nn.Embedding(VOCAB, cfg.d_model)
        self.pos = nn.Embedding(N_CTX, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg, layer >= cfg.attn_only_layers)
                                    for layer in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.unembed = nn.Linear(cfg.d_model, VOCAB, bias=False)

    def init_weights(self, generator: torch.Generator) -> FVTransformer:
        """GPT-2 style init from ``generator`` (std 0.02, residual projections / sqrt(2L))."""
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.ndim == 1:
                    p.copy_(torch.ones_like(p) if name.endswith("weight") else
                            torch.zeros_like(p))
                else:
                    std = 0.02
                    if name.endswith("out.weight") or name.endswith("mlp.2.weight"):
                        std /= math.sqrt(2 * self.cfg.n_layers)
                    p.copy_(torch.randn(p.shape, generator=generator) * std)
        return self

    def embed_tokens(self, tokens: torch.Tensor, positions: torch.Tensor | None = None
                     ) -> torch.Tensor:
        b, t = tokens.shape
        if positions is None and self.cfg.positions == "packed":
            if t > N_CTX:
                raise ValueError(f"prompts must have at most {N_CTX} tokens (6 shots), got {t}")
            positions = ((tokens != PAD).long().cumsum(1) - 1).clamp(min=0)
        elif positions is None:
            positions = default_positions(b, t, tokens.device)
        elif positions.shape != tokens.shape or int(positions.max()) >= N_CTX:
            raise ValueError(f"positions must match tokens {tuple(tokens.shape)} and lie in "
                             f"0..{N_CTX - 1}")
        return self.embed(tokens) + self.pos(positions)

    def forward(self, tokens, allowed=None, head_patch: HeadPatch | None = None,
                resid_add: torch.Tensor | None = None, attn_override: dict | None = None,
                record: bool = False, last_only: bool = True,
                positions: torch.Tensor | None = None):
        """Logits ``[B, V]`` at the final token (``last_only``) or ``[B, T, V]``.

        ``allowed [B, T, T]`` (default :func:`attention_mask`); ``head_patch`` replaces head
        outputs at the final token; ``resid_add [B, L, D]`` is added to the residual after
        layer ``l`` at the final token; ``attn_override {layer: (heads [H] bool,
        weights [B, H, T, T])}`` replaces those heads' attention weights. With ``record``
        returns ``(logits, Record)``. ``positions [B, T]`` for compacted prompts.
        """
        if allowed is None:
            allowed = attention_mask(tokens)
        rec = Record([], [], [], [], [], [], [], []) if record else None
        x = self.embed_tokens(tokens, positions)
        if rec is not None:
            rec.embed = x
        for layer, block in enumerate(self.blocks):
            x = block(x, allowed, layer, head_patch, attn_override, rec)
            if resid_add is not None:
                x = torch.cat([x[:, :-1], (x[:, -1] + resid_add[:, layer])[:, None]], 1)
                if rec is not None:
                    rec.resid[-1] = x
        h = x[:, -1] if last_only else x
        logits = self.unembed(self.ln_f(h))
        return (logits, rec) if record else logits

    def forward_last(self, cache: Record, allowed_last: torch.Tensor,
                     rows: torch.Tensor | None = None, head_patch: HeadPatch | None = None,
                     resid_add: torch.Tensor | None = None) -> torch.Tensor:
        """Final-token logits ``[B', V]`` re-using the prefix of an unpatched run.

        Interventions at the final token never change earlier positions, so only the final
        token is recomputed: its queries attend to the cached keys/values of ``cache``
        (recorded on the base prompts), row ``rows[i]`` for output ``i`` (default identity).
        ``allowed_last [B, T]`` is the final row of the base prompts' attention mask. Equal
        to :meth:`forward` with the same patch (a test checks it); ~T times cheaper.
        """
        c = self.cfg
        rows = torch.arange(cache.embed.shape[0]) if rows is None else rows
        x = cache.embed[rows, -1]  # [B', D]
        allowed = allowed_last[rows]  # [B', T]
        for layer, blk in enumerate(self.blocks):
            q, k, v = blk.qkv(blk.ln1(x)).view(-1, 3, c.n_heads, c.d_head).unbind(1)
            keys = torch.cat([cache.k[layer][rows, :-1], k[:, None]], 1)  # [B', T, H, dh]
            vals = torch.cat([cache.v[layer][rows, :-1], v[:, None]], 1)
            scores = torch.einsum("bhd,bthd->bht", q, keys) / math.sqrt(c.d_head)
            a = torch.softmax(scores.masked_fill(~allowed[:, None], -math.inf), -1)
            z = torch.einsum("bht,bthd->bhd", a, vals)
            if head_patch is not None:
                m = head_patch.mask[:, layer]
                z = torch.where(m[:, :, None], head_patch.values[:, layer], z)
            x = x + blk.out(z.reshape(-1, c.d_model))
            x = x + blk.mlp_out(x)
            if resid_add is not None:
                x = x + resid_add[:, layer]
        return self.unembed(self.ln_f(x))

    def run_from(self, x: torch.Tensor, start: int, allowed: torch.Tensor) -> torch.Tensor:
        """Continue from the residual ``x [B, T, D]`` after layer ``start - 1``; final logits."""
        for layer in range(start, self.cfg.n_layers):
            x = self.blocks[layer](x, allowed, layer)
        return self.unembed(self.ln_f(x[:, -1]))

    def run_to(self, tokens: torch.Tensor, stop: int, allowed=None) -> torch.Tensor:
        """The residual ``[B, T, D]`` after layer ``stop`` (``stop = -1``: the embedding)."""
        allowed = attention_mask(tokens) if allowed is None else allowed
        x = self.embed_tokens(tokens)
        for layer in range(stop + 1):
            x = self.blocks[layer](x, allowed, layer)
        return x


def model_from_state(blob: dict, device="cpu") -> FVTransformer:
    """Rebuild an eval-mode model from :func:`train_model`'s output."""
    model = FVTransformer(ModelConfig(**blob["model_config"]))
    model.load_state_dict({k: v.float() for k, v in blob["state"].items()})
    return model.to(device).eval()
