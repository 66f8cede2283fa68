"""A tiny character LM whose K/V cache is quantized at decode time (GSRQ's F3, scale gap).

The paper quantizes the KV cache of LLaMA-3-8B and scores LongBench; nothing of that size runs
here, so this module trains a 2-layer, 2-head character transformer (head dimension 32) in
place on the prose of CPython's bundled ``pydoc_data.topics`` (~465k characters, no download),
with a synthetic passkey task mixed into its training windows::

    " pass key 38261. ... 48 characters of text ... pass key 38261"

The key opens the window and is asked for at its end, so the last ``passkey_digits``
characters can only be predicted by attending ~50 positions back through the cache: passkey
accuracy measures retrieval through the K/V cache, the part that quantization damages.  (With
the key at a random depth the model must learn an induction circuit, which this budget does
not reach: accuracy stayed at chance after 800 steps in our probe; at a fixed depth it is
learnt within ~600 steps.)

Quantized decoding.  Every key and value vector (per layer, per head, ``[32]``) is replaced by
its residual-quantized reconstruction when it is written to the cache; queries stay exact.
Because each token's K/V is quantized on write and never changes afterwards, one causal
forward pass with quantized K/V gives exactly the logits of token-by-token decoding with a
quantized cache (:func:`decode_logits` checks this).  Codebooks are fitted per layer and per
K/V (shared by the heads) on calibration windows from the training split; GSRQ weights each
vector by the attention mass it receives there (the paper's importance weights), RQ-kmeans
is unweighted, as in the paper's baseline.

Rate: ``M log2 K / 32`` bits per element, so K = 256 and M = 4 stages is 1 bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from icml26.gsrq.quantizer import rq_reconstruct

#: newline + printable ASCII; anything else (curly quotes, ...) maps to "?"
ALPHABET = "\n" + "".join(chr(i) for i in range(32, 127))
PASSKEY_PREFIX = " pass key "


@dataclass(frozen=True)
class TinyLMConfig:
    """Defaults sized for ~1-2 minutes of CPU training (ours; the paper used LLaMA-3-8B)."""

    context: int = 64  # characters per window
    d_model: int = 64
    n_heads: int = 2  # head dimension d_model / n_heads = 32
    n_layers: int = 2  # two layers: the minimum for an induction (copy) circuit
    steps: int = 800  # passkey retrieval is learnt after ~600 steps in our probe
    batch: int = 32
    lr: float = 3e-3
    passkey_digits: int = 5
    passkey_fraction: float = 0.5  # share of training windows that carry a passkey
    train_seed: int = 0  # the model is an instrument, like the paper's one checkpoint
    val_fraction: float = 0.1  # the last 10% of the text is held out

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads

    def validate(self) -> None:
        for name in ("context", "d_model", "n_heads", "n_layers", "steps", "batch",
                     "passkey_digits"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be a multiple of "
                             f"n_heads={self.n_heads}")
        if self.context < 2 * (len(PASSKEY_PREFIX) + self.passkey_digits) + 2:
            raise ValueError(f"context={self.context} is too short for two passkey lines")
        if not 0 <= self.passkey_fraction <= 1 or not 0 < self.val_fraction < 1:
            raise ValueError("passkey_fraction must be in [0, 1] and val_fraction in (0, 1)")


def corpus() -> torch.Tensor:
    """The whole ``pydoc_data.topics`` text as character ids ``[465k]`` (sorted topics)."""
    from pydoc_data.topics import topics

    text = "\n".join(topics[k] for k in sorted(topics))
    table = {c: i for i, c in enumerate(ALPHABET)}
    unknown = table["?"]
    return torch.tensor([table.get(c, unknown) for c in text], dtype=torch.long)


def encode(text: str) -> list[int]:
    return [ALPHABET.index(c) if c in ALPHABET else ALPHABET.index("?") for c in text]


def split_corpus(cfg: TinyLMConfig) -> tuple[torch.Tensor, torch.Tensor]:
    ids = corpus()
    cut = int(len(ids) * (1 - cfg.val_fraction))
    return ids[:cut], ids[cut:]


def sample_windows(src: torch.Tensor, cfg: TinyLMConfig, n: int, generator: torch.Generator,
                   passkey_fraction: float | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` windows ``[n, context + 1]`` of ``src``; some carry a passkey twice.

    Returns ``(windows, has_key [n] bool, digits [n, passkey_digits])``; in a passkey window
    the line ``" pass key DDDDD."`` opens the window and the window ends with
    ``" pass key DDDDD"``, so its last ``passkey_digits`` targets are the digits.
    """
    frac = cfg.passkey_fraction if passkey_fraction is None else passkey_fraction
    t = cfg.context + 1
    start = torch.randint(0, len(src) - t, (n,), generator=generator)
    win = src[start[:, None] + torch.arange(t)]
    has = torch.rand(n, generator=generator) < frac
    digits = torch.randint(0, 10, (n, cfg.passkey_digits), generator=generator)
    prefix = torch.tensor(encode(PASSKEY_PREFIX))
    dot = ALPHABET.index(".")
    zero = ALPHABET.index("0")
    tail_len = len(prefix) + cfg.passkey_digits
    first_len = tail_len + 1
    for i in torch.nonzero(has).flatten().tolist():
        line = torch.cat([prefix, digits[i] + zero])
        win[i, :first_len] = torch.cat([line, torch.tensor([dot])])
        win[i, t - tail_len :] = line
    return win, has, digits


class Block(nn.Module):
    """Pre-LN transformer block with explicit attention (to read attention mass)."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.cfg = cfg
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
                                 nn.Linear(4 * cfg.d_model, cfg.d_model))

    def qkv_heads(self, x: torch.Tensor):
        """``[B, T, D] -> q, k, v`` each ``[B, H, T, D/H]``."""
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(self.cfg.d_model, dim=2)
        return [z.view(b, t, self.cfg.n_heads, self.cfg.head_dim).transpose(1, 2)
                for z in (q, k, v)]

    def finish(self, x: torch.Tensor, att: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = att.shape
        y = (att @ v).transpose(1, 2).reshape(b, t, self.cfg.d_model)
        x = x + self.proj(y)
        return x + self.mlp(self.ln2(x))

    def forward(self, x: torch.Tensor, kv_hook=None, layer: int = 0):
        q, k, v = self.qkv_heads(x)
        if kv_hook is not None:
            k, v = kv_hook(layer, k, v)
        t = x.shape[1]
        logits = (q @ k.transpose(-1, -2)) / math.sqrt(self.cfg.head_dim)
        causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = logits.masked_fill(~causal, float("-inf")).softmax(-1)  # [B, H, T, T]
        return self.finish(x, att, v), att


class TinyLM(nn.Module):
    """Character transformer ``[B, T] ids -> [B, T, vocab]`` logits."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        cfg.validate()
        self.cfg = cfg
        self.tok = nn.Embedding(len(ALPHABET), cfg.d_model)
        self.pos = nn.Embedding(cfg.context, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, len(ALPHABET))

    def forward(self, ids: torch.Tensor, kv_hook=None, return_attention: bool = False):
        if ids.shape[1] > self.cfg.context:
            raise ValueError(f"sequence length {ids.shape[1]} exceeds context "
                             f"{self.cfg.context}")
        x = self.tok(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        atts = []
        for i, block in enumerate(self.blocks):
            x, att = block(x, kv_hook, i)
            atts.append(att)
        logits = self.head(self.ln(x))
        return (logits, atts) if return_attention else logits


def train_tiny_lm(cfg: TinyLMConfig, progress=None, device="cpu") -> dict:
    """Train from scratch (AdamW, warm-up + cosine) on ``device``; returns
    ``{"state": ... (CPU tensors), "loss": [...]}``. Parameters are initialised and windows
    drawn on the CPU, then moved to ``device``."""
    cfg.validate()
    torch.manual_seed(cfg.train_seed)  # parameter init; data draws use their own generator
    model = TinyLM(cfg).to(device)
    g = torch.Generator().manual_seed(cfg.train_seed)
    train, _ = split_corpus(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    losses = []
    for step in range(cfg.steps):
        warm = min(1.0, (step + 1) / 50)
        cosine = 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * step / cfg.steps))
        for group in opt.param_groups:
            group["lr"] = cfg.lr * warm * cosine
        win, _, _ = sample_windows(train, cfg, cfg.batch, g)
        win = win.to(device)
        logits = model(win[:, :-1])
        loss = F.cross_entropy(logits.flatten(0, 1), win[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if progress is not None:
            progress(step)
    return {"state": {k: v.detach().cpu().clone() for k, v in model.state_dict().items()},
            "loss": losses}


def load_model(cfg: TinyLMConfig, trained: dict) -> TinyLM:
    model = TinyLM(cfg)
    model.load_state_dict(trained["state"])
    return model.eval()


def decode_logits(model: TinyLM, ids: torch.Tensor, quantize=None) -> torch.Tensor:
    """Token-by-token decoding with a K/V cache, each K/V quantized when written.

    ``ids [B, T] -> logits [B, T, vocab]``; ``quantize(layer, k, v)`` maps ``[B, H, 1, dh]``
    tensors to their cached versions.  Slow (a Python loop over T); used to check that the
    parallel forward with a ``kv_hook`` computes the same thing.
    """
    b, t = ids.shape
    caches: list[list[torch.Tensor]] = [[] for _ in model.blocks]
    out = []
    with torch.no_grad():
        for pos in range(t):
            x = model.tok(ids[:, pos : pos + 1]) + model.pos.weight[pos]
            for i, block in enumerate(model.blocks):
                q, k, v = block.qkv_heads(x)
                if quantize is not None:
                    k, v = quantize(i, k, v)
                caches[i].append((k, v))
                ks = torch.cat([c[0] for c in caches[i]], dim=2)
                vs = torch.cat([c[1] for c in caches[i]], dim=2)
                att = ((q @ ks.transpose(-1, -2)) / math.sqrt(block.cfg.head_dim)).softmax(-1)
                x = block.finish(x, att, vs)
            out.append(model.head(model.ln(x)))
    return torch.cat(out, dim=1)


def collect_kv(model: TinyLM, windows: torch.Tensor) -> dict:
    """Keys, values and the attention mass each key receives, per layer.

    Returns ``{"k": [L x [N, dh]], "v": [...], "mass": [L x [N]]}`` with ``N = B H T`` rows
    ordered like ``k.reshape(-1, dh)``; mass is the column sum of the attention matrix,
    normalised to mean 1.
    """
    ks, vs = [], []

    def hook(layer, k, v):
        ks.append(k)
        vs.append(v)
        return k, v

    with torch.no_grad():
        _, atts = model(windows, kv_hook=hook, return_attention=True)
    dh = model.cfg.head_dim
    mass = [a.sum(dim=2).reshape(-1) for a in atts]  # [B, H, T] received by each key
    return {"k": [k.reshape(-1, dh).contiguous() for k in ks],
            "v": [v.reshape(-1, dh).contiguous() for v in vs],
            "mass": [m / m.mean() for m in mass]}


def quantized_hook(codebooks: dict, n_stages: int, impl: str = "auto"):
    """A ``kv_hook`` that replaces K and V by their first-``n_stages`` RQ reconstructions.

    ``codebooks[(layer, "k" | "v")]`` is a list of fitted stages (``icml26.gsrq.Stage``).
    """

    def hook(layer, k, v):
        out = []
        for name, z in (("k", k), ("v", v)):
            flat = z.reshape(-1, z.shape[-1]).contiguous()
            rec = rq_reconstruct(flat, codebooks[(layer, name)], n_stages, impl=impl)
            out.append(rec.view_as(z))
        return tuple(out)

    return hook


def evaluate(model: TinyLM, text_windows: torch.Tensor, key_windows: torch.Tensor,
             n_digits: int, kv_hook=None) -> dict:
    """Perplexity on plain windows and teacher-forced passkey digit accuracy."""
    with torch.no_grad():
        logits = model(text_windows[:, :-1], kv_hook=kv_hook)
        nll = F.cross_entropy(logits.flatten(0, 1), text_windows[:, 1:].flatten())
        klog = model(key_windows[:, :-1], kv_hook=kv_hook)
        pred = klog[:, -n_digits:].argmax(-1)
        acc = (pred == key_windows[:, -n_digits:]).float().mean()
    return {"ppl": float(torch.exp(nll)), "passkey": float(acc)}
