"""A tiny character LM whose K/V cache is quantized at decode time (GSRQ's F3, scale gap).

The paper quantizes the KV cache of LLaMA-3-8B and scores LongBench; nothing of that size runs
here, so this module trains a 2-layer character transformer in place on the prose of CPython's
bundled ``pydoc_data.topics`` (~465k characters, no download), with key lines mixed into half
of its training windows.  Two designs (issue 47):

* first (``n_keys = 1``): 2 heads of 32 on a 64-wide residual; one passkey at both ends of a
  64-character window, ``" pass key 38261. ... text ... pass key 38261"``.  Saturated: both
  quantizers recalled it near 1.0, and head dim 32 is too low for the shrinkage GSKM fixes.
* second (``n_keys > 1``, ``head_size = 128``): one head of 128 per layer (LLaMA's head dim)
  on a 128-wide residual, so K/V are full rank; ``n_keys`` keys open a 96-character window,
  ``" a=3973 b=7316 c=6986 d=6843. ... text ... a=3973 b=7316 c=6986 d=6843"``, and are
  recalled in order at its end: every recalled digit (:func:`answer_offsets`) can only be
  predicted by attending ~70 positions back through the cache, next to other digits.  (With
  the asked key drawn at random the lookup is content based; in a probe it stayed at chance
  after 800 steps, like the first design's key at a random depth.)

Quantized decoding.  Every key and value vector (per layer, per head, ``[head_dim]``) is
replaced by its residual-quantized reconstruction when it is written to the cache; queries stay
exact.  Because each token's K/V is quantized on write and never changes afterwards, one causal
forward pass with quantized K/V gives exactly the logits of token-by-token decoding with a
quantized cache (:func:`decode_logits` checks this).  Codebooks are fitted per layer and per
K/V (shared by the heads) on calibration windows from the training split; GSRQ weights each
vector by the attention mass it receives there (the paper's importance weights), RQ-kmeans
is unweighted, as in the paper's baseline.

Rate: ``M log2 K / head_dim`` bits per element (K = 256: 4 stages are 1 bit at head dim 32,
16 stages at head dim 128).
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
KEY_NAMES = "abcdefghijklmnop"  # the multi-key task's key names, in header order


@dataclass(frozen=True)
class TinyLMConfig:
    """Defaults: the first design, ~1-2 minutes of CPU training (ours; the paper used
    LLaMA-3-8B); the second design sets ``head_size``, ``n_keys`` (``experiments.lm_config``)."""

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
    head_size: int = 0  # per-head K/V width; 0 = d_model / n_heads (LLaMA's is 128)
    n_keys: int = 1  # key lines in a key window; > 1: the multi-key task (see module doc)

    @property
    def head_dim(self) -> int:
        return self.head_size or self.d_model // self.n_heads

    @property
    def attn_dim(self) -> int:
        return self.n_heads * self.head_dim

    def validate(self) -> None:
        for name in ("context", "d_model", "n_heads", "n_layers", "steps", "batch",
                     "passkey_digits", "n_keys"):
            v = getattr(self, name)
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        if not self.head_size and self.d_model % self.n_heads:
            raise ValueError(f"d_model={self.d_model} must be a multiple of "
                             f"n_heads={self.n_heads}")
        if self.head_size < 0 or self.n_keys > len(KEY_NAMES):
            raise ValueError(f"head_size must be >= 0 and n_keys <= {len(KEY_NAMES)}")
        if self.context < key_header_len(self) + tail_len(self) + 2:
            raise ValueError(f"context={self.context} is too short for the key lines")
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


def key_header_len(cfg: TinyLMConfig) -> int:
    """Characters of the key lines that open a key window (the final "." included)."""
    if cfg.n_keys == 1:
        return len(PASSKEY_PREFIX) + cfg.passkey_digits + 1
    return cfg.n_keys * (3 + cfg.passkey_digits) + 1  # " a=DDDD" per key, then "."


def tail_len(cfg: TinyLMConfig) -> int:
    """Characters of the recall that closes a key window, its digits included."""
    return key_header_len(cfg) - 1


def answer_offsets(cfg: TinyLMConfig) -> torch.Tensor:
    """Positions of the recalled digits among the window's targets, counted from its end
    (``-1`` = the last target): the digits a key window asks for."""
    if cfg.n_keys == 1:
        return torch.arange(-cfg.passkey_digits, 0)
    per = 3 + cfg.passkey_digits  # " a=" then the digits
    start = -tail_len(cfg)
    return torch.tensor([start + j * per + 3 + i for j in range(cfg.n_keys)
                         for i in range(cfg.passkey_digits)])


def sample_windows(src: torch.Tensor, cfg: TinyLMConfig, n: int, generator: torch.Generator,
                   passkey_fraction: float | None = None
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``n`` windows ``[n, context + 1]`` of ``src``; some carry key lines and their recall.

    Returns ``(windows, has_key [n] bool, digits [n, n_keys * passkey_digits])``.
    ``n_keys == 1``: the line ``" pass key DDDDD."`` opens the window and it ends with
    ``" pass key DDDDD"``. ``n_keys > 1``: ``" a=DDDD b=DDDD ... ."`` opens it (names in
    :data:`KEY_NAMES` order, digits drawn per key) and it ends with the same lines again
    (without the "."). The recalled digits are the targets at :func:`answer_offsets`.
    """
    frac = cfg.passkey_fraction if passkey_fraction is None else passkey_fraction
    t = cfg.context + 1
    start = torch.randint(0, len(src) - t, (n,), generator=generator)
    win = src[start[:, None] + torch.arange(t)]
    has = torch.rand(n, generator=generator) < frac
    digits = torch.randint(0, 10, (n, cfg.n_keys, cfg.passkey_digits), generator=generator)
    zero, dot = ALPHABET.index("0"), torch.tensor(encode("."))
    for i in torch.nonzero(has).flatten().tolist():
        if cfg.n_keys == 1:
            recall = torch.cat([torch.tensor(encode(PASSKEY_PREFIX)), digits[i, 0] + zero])
        else:
            recall = torch.cat([torch.cat([torch.tensor(encode(f" {KEY_NAMES[j]}=")),
                                           digits[i, j] + zero]) for j in range(cfg.n_keys)])
        win[i, : len(recall) + 1] = torch.cat([recall, dot])
        win[i, t - len(recall) :] = recall
    return win, has, digits.flatten(1)


class Block(nn.Module):
    """Pre-LN transformer block with explicit attention (to read attention mass)."""

    def __init__(self, cfg: TinyLMConfig):
        super().__init__()
        self.cfg = cfg
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.attn_dim)
        self.proj = nn.Linear(cfg.attn_dim, cfg.d_model)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
                                 nn.Linear(4 * cfg.d_model, cfg.d_model))

    def qkv_heads(self, x: torch.Tensor):
        """``[B, T, D] -> q, k, v`` each ``[B, H, T, head_dim]``."""
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(self.cfg.attn_dim, dim=2)
        return [z.view(b, t, self.cfg.n_heads, self.cfg.head_dim).transpose(1, 2)
                for z in (q, k, v)]

    def finish(self, x: torch.Tensor, att: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        b, _, t, _ = att.shape
        y = (att @ v).transpose(1, 2).reshape(b, t, self.cfg.attn_dim)
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
             n_digits: int | None = None, kv_hook=None) -> dict:
    """Perplexity on plain windows and teacher-forced accuracy on the recalled digits
    (``"passkey"``; :func:`answer_offsets` of the model's config, ``n_digits`` is unused)."""
    with torch.no_grad():
        logits = model(text_windows[:, :-1], kv_hook=kv_hook)
        nll = F.cross_entropy(logits.flatten(0, 1), text_windows[:, 1:].flatten())
        klog = model(key_windows[:, :-1], kv_hook=kv_hook)
        at = answer_offsets(model.cfg) + klog.shape[1]
        pred = klog[:, at].argmax(-1)
        acc = (pred == key_windows[:, 1:][:, at]).float().mean()
    return {"ppl": float(torch.exp(nll)), "passkey": float(acc)}
